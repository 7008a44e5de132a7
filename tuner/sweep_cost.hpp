// What sweeping a problem costs, in seconds of one GPU, before it runs: the model behind the shard cut
// (tuner/shard_plan.hpp) and behind `sweep --dry-run`'s estimates, which a user chooses N by.
//
// The model follows what the sweep does (tuner/sweep.cpp, tuner/candidate_pruning.hpp), candidate by candidate:
//   problem    a fixed overhead (buffers, random inputs, cuBLASLt's searches, the db transaction) and the fp64
//              reference, from its flops;
//   candidate  a fixed overhead (launcher, verification, SM clock) and one verification call, plus, with pruning,
//              one first batch (the warm-up calls) at a pruned candidate's typical call time;
//   sampled    the candidates sampled to convergence (all of them without pruning; with it, a share): a fixed
//              overhead, the warm-up, the stopping rule's calls (at least min_samples and min_time, this much beyond
//              that minimum, at most max_time), 20 events cross-check calls, and a host overhead per batch;
//   finalists  at a share of the problems, the finalist stage (tuner/program_timing.hpp's batching) for heuristic-
//              first and a typical number of challengers.
// Call times: the best candidate's from its flops at a rate per math mode, over a floor for a small GEMM's launch
// and tail; other candidates' as typical multiples of it.
//
// The rates are an H200's (the built-in ones, fitted to its sweeps; the shard cut always uses these, so every process
// cuts alike), or measured from a db's finished runs of the same profile: per mode, the best candidates' flop rate;
// the pruned and sampled candidates' shares and call-time multiples; and a scale, the runs' wall time over what the
// model says for the problems they measured, which absorbs every host overhead of that machine.
#pragma once

#include <cstdint>
#include <string>

#include "db/tuning_db.hpp"
#include "profile/sweep_profile.hpp"
#include "tuner/plan.hpp"

namespace gemmtune {

// The built-in values are an H200's (driver 580, cuBLASLt 13.1): the fp32 rate is its best candidates' in the
// committed `ci` baseline (results/nvidia-h200/baseline.json: 50 TFLOP/s at 1-2k cubes), the 3xtf32 one the 3xtf32
// speed record (1.18x cuBLASLt fp32); the tf32 rate, the shares and the multiples are what a pruned `default` run
// measured there (results/nvidia-h200/sweep_cost.json: 372 TFLOP/s, 22% of 4542 candidates sampled at 1.12x the
// best, the rest pruned at 2.10x; 296 finalists over its 108 problems, every problem with a finalist stage since the
// no-entry members always run it). The overheads make the model's old-rules price of `ci` and `default` what those
// sweeps took there (20.5 s of sweeping in 22 s; 139.9 s, which the model puts at 147 s).
struct CostRates {
  double call_floor_s = 5e-6;        // a small GEMM's launch and tail
  double fp32_flops_per_s = 50e12;   // the best candidate's rate, per math mode
  double tf32_flops_per_s = 372e12;
  double tf32x3_flops_per_s = 60e12;
  double reference_flops_per_s = 2e12;  // the fp64 reference every problem is verified against
  double problem_overhead_s = 0.03;
  double candidate_overhead_s = 0.002;
  double sampled_overhead_s = 0.001;  // a sampled candidate's second launcher and its SM clock
  double batch_overhead_s = 2.5e-4;   // blocking kernel, launches, synchronize, CUPTI flush, per batch
  double sampled_beyond_minimum = 1.03;  // the stopping rule samples this much beyond its minimum
  double pruned_slowdown = 2.1;       // a pruned candidate's call time over the best's
  double sampled_slowdown = 1.12;     // a sampled one's
  double sampled_share = 0.22;        // with pruning: of the candidates that ran, those sampled to convergence
  double finalist_share = 1.0;        // of problems, those whose finalist stage runs
  int finalist_challengers = 2;       // challengers it times beside heuristic-first (1.7 measured)
  double scale = 1;                   // measured wall over this model's, from a db's runs
  std::string source = "built-in rates of an H200";

  double flops_per_s(MathMode m) const;
  // "best candidates at 50 (fp32), 400 (tf32), 60 (3xtf32) TFLOP/s; 20% of candidates sampled, the rest at 2.2x the
  // best; scale 1.00": the numbers behind an estimate.
  std::string describe() const;
};

inline constexpr int kAlgoIdsAnswered = 6;  // algo ids that a per-algo-id search typically gets answers for
inline constexpr double kProcessSetupS = 1.0;  // a sweep process: CUDA context, cuBLASLt, CUPTI, the db's run

// The candidates a planned problem is expected to run: its own variants and what the cuBLASLt search typically
// answers.
int expected_candidates(const PlannedProblem& pp, const LtSearchSettings& lt);

// Seconds to sweep problem `p` with `candidates` candidates under the profile's timing, at `rates` (scale applied).
double problem_cost_s(const GemmProblem& p, int candidates, const TimingSettings& timing, const CostRates& rates);

// The expected calls the stopping rule samples of a candidate whose calls take call_s (without warm-up and first
// batch), and the batches they come in.
struct SampledCalls {
  double calls = 0;
  double batches = 0;
};
SampledCalls expected_sampled_calls(double call_s, const TimingSettings& timing, double beyond_minimum);

// The built-in model's estimate in whole microseconds, so that every process sorts and cuts identically.
std::int64_t estimated_cost_us(const PlannedProblem& pp, const SweepProfile& profile);

// Rates measured from `db`'s finished runs of profile `profile_name` on one device key (the latest such run's),
// starting from `base` for whatever the runs cannot tell (a math mode they did not sweep). Unchanged (and `note`
// says why) when there is no such run.
CostRates rates_from_db(const TuningDb& db, const std::string& profile_name, const TimingSettings& timing,
                        const CostRates& base, std::string* note);

}  // namespace gemmtune
