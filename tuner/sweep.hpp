// Sweep: for every planned problem, every candidate is verified against the fp64 reference, then timed; each
// problem's records are stored in the db in one transaction, which also updates the algo cache.
#pragma once

#include <string>
#include <vector>

#include <optional>

#include "cupti/range_profiler.hpp"
#include "problem/candidate_choice.hpp"
#include "problem/measurement.hpp"
#include "profiler/roofline.hpp"
#include "profile/sweep_profile.hpp"
#include "tuner/plan.hpp"

namespace gemmtune {

struct SweepOptions {
  int device = 0;
  std::string db_path;          // empty: nothing is stored
  bool resume = false;          // skip problems this device key already has in the db
  bool force_events = false;    // time with CUDA events even where CUPTI works
  bool quiet = false;           // no progress lines on stderr
  bool metrics = false;         // hardware counters of each problem's best candidate (CUPTI range profiler)
};

// `sweep --metrics`: what the counters say about a problem's chosen candidate, placed on the roofline.
struct ProblemMetrics {
  std::string candidate_id;
  RangeMetrics counters;                   // DRAM bytes and SM throughput of one call, L2 flushed before it
  double min_dram_bytes = 0;               // each operand and output touched once
  std::optional<RooflineVerdict> roofline; // absent when this GPU has no entry in the nominal peaks table
};

// Where one problem's sweep time went: host wall-clock seconds, during which the GPU works or waits on the host
// (so a sweep's wall time is the GPU time it takes), and what the pruning rules (tuner/candidate_pruning.hpp) saved.
struct ProblemCost {
  double wall_s = 0;     // the whole problem, from its buffers to its db transaction
  double prepare_s = 0;  // buffers and random inputs, the fp64 reference, cuBLASLt's candidate searches
  double verify_s = 0;   // each candidate's support check, verification and first batch
  double sample_s = 0;   // sampling to convergence
  double finalist_s = 0; // the finalist stage
  double store_s = 0;    // the db transaction
  int candidates = 0;    // enumerated
  int sampled = 0;       // sampled to convergence
  int pruned = 0;        // not sampled past their first batch
  int finalists = 0;     // challengers the finalist stage timed beside heuristic-first (0: the stage did not run)
  int out_of_reach = 0;  // finalists by kernel time that the reach rule did not time
  ProblemCost& operator+=(const ProblemCost& o);
};

// One candidate as the finalist stage timed it, in every condition: what the --json document shows of the stage, so a
// kept entry (or a challenger left out) can be read back to its per-condition times.
struct FinalistTiming {
  std::string candidate;  // its id
  // "heuristic_first"; "no_entry": one of the runtime's first-use challengers without an entry
  // (lt/no_entry_candidates.hpp); "challenger": a fast candidate beyond those
  std::string role;
  // The smallest noise a challenger's margins had to clear against any member of the no-entry set (its placement
  // noise and theirs, problem/candidate_choice.hpp: placement_noise); for a member, its own placement noise.
  double noise_bound = 0;
  std::vector<ConditionTime> conditions;
};

struct ProblemResult {
  GemmProblem problem;
  std::vector<MeasurementRecord> records;  // empty when resumed
  bool resumed = false;
  std::optional<ProblemMetrics> metrics;
  // The finalist stage's decision (problem/candidate_choice.hpp): the index in records of what the cache keeps
  // (-1: no stage ran, the ranking's chosen_candidate stands) and its margin over heuristic-first.
  int kept_record = -1;
  MarginEvidence evidence;
  std::vector<FinalistTiming> finalists;  // empty where the stage timed nothing (no stage, or nothing near enough)
  ProblemCost cost;
};

// What the cache keeps for this problem: the finalist stage's decision, else the ranking's choice; null if nothing
// was verified and timed.
const MeasurementRecord* kept_candidate(const ProblemResult& pr);

struct SweepResult {
  RunInfo run;
  std::vector<ProblemResult> problems;
  int verify_failures = 0;
  int errors = 0;
  std::string timer_warning;  // set when CUPTI could not be used
  std::string metrics_warning;  // set when --metrics was asked for but the range profiler could not start
  double setup_s = 0;  // before the first problem: the device, cuBLASLt, CUPTI, the db's run (--devices: summed)
  double wall_s = 0;   // the whole sweep
  // --devices: each GPU's part of the combined sweep; empty for one process.
  struct GpuShare {
    int device = 0;
    int shards = 0;     // worker processes it ran, one shard each
    double busy_s = 0;  // those processes' lifetimes, start to exit
    double sweep_s = 0; // of which their sweeps (setup included; the rest is process start and plan)
  };
  std::vector<GpuShare> gpus;
};

SweepResult run_sweep(const SweepPlan& plan, const SweepProfile& profile, const SweepOptions& options);

}  // namespace gemmtune
