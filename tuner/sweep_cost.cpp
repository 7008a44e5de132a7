#include "tuner/sweep_cost.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>

#include "lt/lt_gemm.hpp"
#include "problem/pass_gemm.hpp"
#include "tuner/candidate_pruning.hpp"
#include "tuner/program_timing.hpp"

namespace gemmtune {
namespace {

constexpr int kEventsCheckCalls = 20;         // measurement_loop.cpp's cross-check after sampling
constexpr double kUnprunedFinalistShare = 0.8;  // without the reach rule, most problems have a finalist within 10%
constexpr double kFinalistLauncherS = 0.001;  // a finalist's launcher and, per graph condition, its captured graph

// The finalist stage for heuristic-first and `challengers` others, calls of call_s.
double finalist_stage_s(double call_s, int challengers, const TimingSettings& t, const CostRates& r) {
  const std::size_t conditions = program_conditions(t).size();
  if (conditions == 0 || t.finalists == 0) return 0;
  const std::size_t launchers = 1 + static_cast<std::size_t>(std::min(challengers, t.finalists));
  const ProgramBatching b = program_batching(call_s * 1e6, conditions, launchers);
  const double batches = static_cast<double>((b.repeats + 1) * conditions * launchers);  // one warm-up round
  return batches * (b.calls * call_s + r.batch_overhead_s) +
         static_cast<double>(launchers * conditions) * kFinalistLauncherS;
}

// A candidate sampled to convergence: its overhead, warm-up, the stopping rule's calls and the events cross-check.
double sampled_s(double call_s, const TimingSettings& t, const CostRates& r) {
  const SampledCalls sc = expected_sampled_calls(call_s, t, r.sampled_beyond_minimum);
  return r.sampled_overhead_s + (t.warmup_calls + sc.calls + kEventsCheckCalls) * call_s +
         sc.batches * r.batch_overhead_s;
}

// "2026-11-24T23:59:48Z" as seconds since the epoch; nullopt when it is not that form.
std::optional<double> utc_seconds(const std::string& text) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &consumed) != 6 ||
      static_cast<std::size_t>(consumed) != text.size())
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm));
}

bool pruned_record(const MeasurementRecord& r) { return r.message.rfind("pruned:", 0) == 0; }

// One measured problem of a run, as the model sees it.
struct MeasuredProblem {
  GemmProblem problem;
  int ran = 0;  // candidates that ran (verified, failed or errored; not those that could not run it)
  double best_us = 0;
  int pruned = 0, sampled = 0;
  double pruned_ratio_sum = 0, sampled_ratio_sum = 0;  // median / best
};

std::vector<MeasuredProblem> measured_problems(const std::vector<MeasurementRecord>& records) {
  std::map<std::string, std::vector<const MeasurementRecord*>> by_key;
  std::vector<std::string> order;
  for (const MeasurementRecord& r : records) {
    auto [it, added] = by_key.emplace(r.problem.key(), std::vector<const MeasurementRecord*>{});
    if (added) order.push_back(r.problem.key());
    it->second.push_back(&r);
  }
  std::vector<MeasuredProblem> out;
  for (const std::string& key : order) {
    MeasuredProblem m;
    m.problem = by_key[key].front()->problem;
    for (const MeasurementRecord* r : by_key[key]) {
      if (r->status != MeasureStatus::Unsupported) ++m.ran;
      const bool timed = r->status == MeasureStatus::Ok && r->stats.median_us > 0;
      if (timed && (m.best_us == 0 || r->stats.median_us < m.best_us)) m.best_us = r->stats.median_us;
    }
    for (const MeasurementRecord* r : by_key[key]) {
      if (r->status != MeasureStatus::Ok || m.best_us <= 0) continue;
      const double ratio = r->stats.median_us / m.best_us;
      if (pruned_record(*r)) {
        ++m.pruned;
        m.pruned_ratio_sum += ratio;
      } else {
        ++m.sampled;
        m.sampled_ratio_sum += ratio;
      }
    }
    out.push_back(m);
  }
  return out;
}

}  // namespace

double CostRates::flops_per_s(MathMode m) const {
  switch (m) {
    case MathMode::Fp32: return fp32_flops_per_s;
    case MathMode::Tf32: return tf32_flops_per_s;
    case MathMode::Tf32x3: return tf32x3_flops_per_s;
  }
  return fp32_flops_per_s;
}

std::string CostRates::describe() const {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "best candidates at %.0f (fp32), %.0f (tf32), %.0f (3xtf32) TFLOP/s; %.0f%% of candidates sampled "
                "to convergence at %.2fx the best, the rest pruned at %.2fx; scale %.2f",
                fp32_flops_per_s * 1e-12, tf32_flops_per_s * 1e-12, tf32x3_flops_per_s * 1e-12, 100 * sampled_share,
                sampled_slowdown, pruned_slowdown, scale);
  return buf;
}

int expected_candidates(const PlannedProblem& pp, const LtSearchSettings& lt) {
  int count = static_cast<int>(pp.own_variants.size());
  if (pp.lt_search.empty()) return count;
  count += lt.top_k;
  if (lt.by_algo_id) count += lt.per_algo_id * kAlgoIdsAnswered;
  if (lt.unfused_baseline) count += lt.top_k;
  if (lt.unfused_baseline && LtGemm::bias_in_gemm_unsupported_reason(pass_gemm(pp.problem)).empty()) count += lt.top_k;
  return count;
}

SampledCalls expected_sampled_calls(double call_s, const TimingSettings& t, double beyond_minimum) {
  const double batch = std::max(1, t.batch_calls);
  const double call = std::max(call_s, 1e-9);
  const double minimum = std::ceil(std::max<double>(t.min_samples, t.min_time_ms * 1e-3 / call) / batch) * batch;
  const double cap = std::ceil(std::max(t.max_time_ms, t.min_time_ms) * 1e-3 / call / batch) * batch;
  SampledCalls sc;
  sc.calls = std::min(minimum * beyond_minimum, std::max(cap, batch));
  sc.batches = sc.calls / batch;
  return sc;
}

double problem_cost_s(const GemmProblem& p, int candidates, const TimingSettings& t, const CostRates& r) {
  const double flops = p.flops();
  const double best_s = r.call_floor_s + flops / r.flops_per_s(p.mode);
  const double n = std::max(0, candidates);
  // Two kinds of candidate: those near the best (sampled to convergence in any case) and the clearly slower rest
  // (pruned after their first batch, or sampled like the others without pruning).
  const double near = n > 0 ? std::max(1.0, r.sampled_share * n) : 0;
  const double slow = n - near;
  const double near_call = best_s * r.sampled_slowdown, slow_call = best_s * r.pruned_slowdown;
  double s = r.problem_overhead_s + flops / r.reference_flops_per_s;
  s += n * r.candidate_overhead_s + near * near_call + slow * slow_call;  // verification calls
  s += near * sampled_s(near_call, t, r);
  if (t.prune) {
    const double first_batch = std::max(t.warmup_calls, kMinFirstBatchCalls);
    s += n * r.batch_overhead_s + first_batch * (near * near_call + slow * slow_call);
    s += r.finalist_share * finalist_stage_s(best_s, r.finalist_challengers, t, r);
  } else {
    s += slow * sampled_s(slow_call, t, r);
    s += kUnprunedFinalistShare * finalist_stage_s(best_s, t.finalists, t, r);
  }
  return s * r.scale;
}

std::int64_t estimated_cost_us(const PlannedProblem& pp, const SweepProfile& profile) {
  return std::llround(
      problem_cost_s(pp.problem, expected_candidates(pp, profile.lt), profile.timing, CostRates{}) * 1e6);
}

CostRates rates_from_db(const TuningDb& db, const std::string& profile_name, const TimingSettings& timing,
                        const CostRates& base, std::string* note) {
  std::string device_key;
  std::vector<RunInfo> runs;
  for (const RunInfo& run : db.runs())
    if (run.profile == profile_name && !run.finished_at.empty()) runs.push_back(run);
  if (runs.empty()) {
    if (note) *note = "no finished run of profile '" + profile_name + "' in " + db.path();
    return base;
  }
  device_key = runs.back().device.key();  // ids only grow: the latest run's device

  struct RunProblems {
    double wall_s;
    std::vector<MeasuredProblem> problems;
  };
  std::vector<RunProblems> measured;
  std::map<MathMode, std::pair<double, double>> mode_flops_and_s;  // per mode: sum of flops, of best - floor
  int pruned = 0, sampled = 0;
  double pruned_ratio = 0, sampled_ratio = 0;
  for (const RunInfo& run : runs) {
    if (run.device.key() != device_key) continue;
    const std::optional<double> t0 = utc_seconds(run.started_at), t1 = utc_seconds(run.finished_at);
    if (!t0 || !t1 || *t1 < *t0) continue;
    RunProblems rp{*t1 - *t0, measured_problems(db.measurements(run.id))};
    if (rp.problems.empty()) continue;
    for (const MeasuredProblem& m : rp.problems) {
      if (m.best_us <= 0) continue;
      auto& [f, s] = mode_flops_and_s[m.problem.mode];
      f += m.problem.flops();
      s += std::max(m.best_us * 1e-6 - base.call_floor_s, 0.1 * m.best_us * 1e-6);
      pruned += m.pruned;
      sampled += m.sampled;
      pruned_ratio += m.pruned_ratio_sum;
      sampled_ratio += m.sampled_ratio_sum;
    }
    measured.push_back(std::move(rp));
  }
  if (measured.empty()) {
    if (note) *note = "no run of profile '" + profile_name + "' in " + db.path() + " has measured problems";
    return base;
  }

  CostRates r = base;
  r.scale = 1;
  for (const auto& [mode, fs] : mode_flops_and_s) {
    if (fs.second <= 0) continue;
    const double rate = fs.first / fs.second;
    if (mode == MathMode::Fp32) r.fp32_flops_per_s = rate;
    if (mode == MathMode::Tf32) r.tf32_flops_per_s = rate;
    if (mode == MathMode::Tf32x3) r.tf32x3_flops_per_s = rate;
  }
  // The runs' own pruning (records say "pruned: ..." in their message) decides which model they are checked against;
  // shares and multiples are taken only from runs that pruned, since without it every candidate was sampled.
  TimingSettings as_run = timing;
  as_run.prune = pruned > 0;
  if (pruned > 0) {
    r.sampled_share = static_cast<double>(sampled) / (sampled + pruned);
    r.pruned_slowdown = pruned_ratio / pruned;
    if (sampled > 0) r.sampled_slowdown = sampled_ratio / sampled;
  }
  double wall = 0, model = 0;
  std::size_t problems = 0;
  for (const RunProblems& rp : measured) {
    wall += rp.wall_s;
    for (const MeasuredProblem& m : rp.problems) model += problem_cost_s(m.problem, m.ran, as_run, r);
    problems += rp.problems.size();
  }
  if (model > 0 && wall > 0) r.scale = wall / model;
  char numbers[96];
  std::snprintf(numbers, sizeof(numbers), "%zu problem%s, %.0f s", problems, problems == 1 ? "" : "s", wall);
  char scale[32];
  std::snprintf(scale, sizeof(scale), "%.2f", r.scale);
  r.source = "rates measured by " + std::to_string(measured.size()) + " run" + (measured.size() == 1 ? "" : "s") +
             " of '" + profile_name + "' (" + numbers + ") in " + db.path() + ", scale " + scale;
  if (note) note->clear();
  return r;
}

}  // namespace gemmtune
