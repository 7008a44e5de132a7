#include "gate/gate.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "common/error.hpp"
#include "problem/candidate_choice.hpp"
#include "problem/measurement.hpp"

namespace gemmtune {
namespace {

struct Judgement {
  Verdict verdict = Verdict::Unchanged;
  bool within_noise = false, throttled = false;
};

Judgement judge(const CaseTiming& baseline, const CaseTiming& current, double threshold_pct) {
  Judgement j;
  const double factor = 1.0 + threshold_pct / 100.0;
  const bool slower = current.median_us > baseline.median_us * factor;
  const bool faster = current.median_us < baseline.median_us / factor;
  // A GPU that ran at a lower SM clock (power or thermal limits) is slow, not the code: when the clock drop accounts
  // for the slowdown, i.e. the time in clock cycles (median × clock) is within the threshold, it is no regression.
  const bool clocks_known = baseline.sm_clock_mhz > 0 && current.sm_clock_mhz > 0;
  const bool cycles_slower = !clocks_known || current.median_us * current.sm_clock_mhz >
                                                  baseline.median_us * baseline.sm_clock_mhz * factor;
  if (slower && current.p10_us > baseline.p90_us && !cycles_slower)
    j.throttled = true;
  else if (slower && current.p10_us > baseline.p90_us)
    j.verdict = Verdict::Regressed;
  else if (faster && current.p90_us < baseline.p10_us)
    j.verdict = Verdict::Improved;
  else
    j.within_noise = slower || faster;
  return j;
}

// Regressions first (worst first), then improvements (best first), then the rest (slowest first).
bool ranks_before(Verdict va, double ra, Verdict vb, double rb) {
  if (va != vb) return static_cast<int>(va) < static_cast<int>(vb);
  if (ra == rb) return false;
  return va == Verdict::Improved ? ra < rb : ra > rb;
}

// The ok cases of each problem, in the run's order.
std::map<std::string, std::vector<const CaseTiming*>> ok_cases_by_problem(const SweepResults& run) {
  std::map<std::string, std::vector<const CaseTiming*>> out;
  for (const CaseTiming& c : run.cases)
    if (c.ok()) out[c.problem_key].push_back(&c);
  return out;
}

const CaseTiming& fastest(const std::vector<const CaseTiming*>& cases) {
  const CaseTiming* best = cases.front();
  for (const CaseTiming* c : cases)
    if (c->median_us < best->median_us) best = c;
  return *best;
}

// The case the cache would keep, by the db's own rule: chosen_candidate() over the same records.
const CaseTiming& chosen(const std::vector<const CaseTiming*>& cases) {
  std::vector<MeasurementRecord> records(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    records[i].status = MeasureStatus::Ok;
    records[i].candidate = cases[i]->candidate;
    records[i].stats.median_us = cases[i]->median_us;
  }
  const MeasurementRecord* pick = chosen_candidate(records);
  return *cases[static_cast<std::size_t>(pick - records.data())];
}

// What a program using the cache gets from a run: per problem, the keys of its fastest and its chosen candidate.
std::set<std::string> program_picks(const SweepResults& run) {
  std::set<std::string> keys;
  for (const auto& [problem_key, cases] : ok_cases_by_problem(run)) {
    keys.insert(fastest(cases).key);
    keys.insert(chosen(cases).key);
  }
  return keys;
}

// Rule 4 (gate.hpp): a case slower beyond noise stays a regression only when one run's luck cannot explain it.
void require_more_than_luck(const SweepResults& baseline, const SweepResults& current, GateResult& result) {
  std::set<std::string> picked = program_picks(baseline);
  picked.merge(program_picks(current));
  const double family_factor = 1.0 + result.options.threshold_pct / 100.0;
  std::map<std::string, std::pair<int, int>> families;  // family -> (compared cases, slower than --threshold)
  for (CaseComparison& c : result.cases) {
    c.family = case_family(c.current);
    auto& [cases, slower] = families[c.family];
    ++cases;
    slower += c.ratio > family_factor;
  }
  for (CaseComparison& c : result.cases) {
    c.picked = picked.count(c.key) != 0;
    std::tie(c.family_cases, c.family_slower) = families[c.family];
    if (c.verdict != Verdict::Regressed || c.picked) continue;
    const bool family_moved = c.family_cases >= 2 && 2 * c.family_slower > c.family_cases;
    const double lone_threshold = std::max(result.options.lone_threshold_pct, c.threshold_pct);
    if (family_moved || judge(c.baseline, c.current, lone_threshold).verdict == Verdict::Regressed) continue;
    c.verdict = Verdict::Unchanged;
    c.isolated = true;
  }
}

void compare_problems(const SweepResults& baseline, const SweepResults& current, GateResult& result) {
  const auto base_by_problem = ok_cases_by_problem(baseline);
  std::set<std::string> base_problems;
  for (const CaseTiming& b : baseline.cases) base_problems.insert(b.problem_key);
  for (const auto& [problem_key, cur_cases] : ok_cases_by_problem(current)) {
    const auto it = base_by_problem.find(problem_key);
    if (it == base_by_problem.end()) {
      if (base_problems.count(problem_key) == 0) result.new_problems.push_back(problem_key);
      continue;
    }
    if (!result.options.per_problem) continue;
    ProblemComparison p;
    p.problem_key = problem_key;
    p.best = compare_case(fastest(it->second), fastest(cur_cases), result.options.threshold_pct);
    p.chosen = compare_case(chosen(it->second), chosen(cur_cases), result.options.threshold_pct);
    result.problems.push_back(std::move(p));
  }
  const auto worst_ratio = [](const ProblemComparison& p) {
    return p.verdict() == Verdict::Improved ? std::min(p.best.ratio, p.chosen.ratio)
                                            : std::max(p.best.ratio, p.chosen.ratio);
  };
  std::stable_sort(result.problems.begin(), result.problems.end(),
                   [&](const ProblemComparison& a, const ProblemComparison& b) {
                     return ranks_before(a.verdict(), worst_ratio(a), b.verdict(), worst_ratio(b));
                   });
}

}  // namespace

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::Regressed: return "regressed";
    case Verdict::Improved: return "improved";
    case Verdict::Unchanged: return "unchanged";
  }
  return "?";
}

const char* to_string(GateOutcome o) {
  switch (o) {
    case GateOutcome::Passed: return "passed";
    case GateOutcome::Regressed: return "regressed";
    case GateOutcome::InputsDiffer: return "inputs_differ";
  }
  return "?";
}

Verdict ProblemComparison::verdict() const {
  if (best.verdict == Verdict::Regressed || chosen.verdict == Verdict::Regressed) return Verdict::Regressed;
  if (best.verdict == Verdict::Improved || chosen.verdict == Verdict::Improved) return Verdict::Improved;
  return Verdict::Unchanged;
}

int GateResult::count(Verdict v) const {
  const auto has_verdict = [v](const CaseComparison& c) { return c.verdict == v; };
  return static_cast<int>(std::count_if(cases.begin(), cases.end(), has_verdict));
}

int GateResult::count_problems(Verdict v) const {
  const auto has_verdict = [v](const ProblemComparison& p) { return p.verdict() == v; };
  return static_cast<int>(std::count_if(problems.begin(), problems.end(), has_verdict));
}

int GateResult::count_isolated() const {
  const auto isolated = [](const CaseComparison& c) { return c.isolated; };
  return static_cast<int>(std::count_if(cases.begin(), cases.end(), isolated));
}

int GateResult::count_within_run_to_run() const {
  int n = 0;
  for (const ProblemComparison& p : problems) n += p.best.within_run_to_run + p.chosen.within_run_to_run;
  for (const CaseComparison& c : cases) n += c.within_run_to_run;
  return n;
}

GateOutcome GateResult::outcome() const {
  if (static_cast<int>(missing.size()) > options.allow_missing) return GateOutcome::InputsDiffer;
  return count(Verdict::Regressed) > 0 || count_problems(Verdict::Regressed) > 0 ? GateOutcome::Regressed
                                                                                 : GateOutcome::Passed;
}

int GateResult::exit_code() const {
  switch (outcome()) {
    case GateOutcome::Passed: return static_cast<int>(ExitCode::Ok);
    case GateOutcome::Regressed: return static_cast<int>(ExitCode::CheckFailed);
    case GateOutcome::InputsDiffer: return static_cast<int>(ExitCode::BadInput);
  }
  return static_cast<int>(ExitCode::BadInput);
}

CaseComparison compare_case(const CaseTiming& baseline, const CaseTiming& current, double threshold_pct) {
  CaseComparison c;
  c.key = current.key;
  c.baseline = baseline;
  c.current = current;
  c.ratio = current.median_us / baseline.median_us;
  c.threshold_pct = std::max(threshold_pct, baseline.run_to_run_pct);
  const Judgement j = judge(baseline, current, c.threshold_pct);
  c.verdict = j.verdict;
  c.within_noise = j.within_noise;
  c.throttled = j.throttled;
  c.within_run_to_run = c.threshold_pct > threshold_pct && c.verdict != Verdict::Regressed &&
                        judge(baseline, current, threshold_pct).verdict == Verdict::Regressed;
  return c;
}

std::string case_family(const CaseTiming& c) {
  const std::string who = c.candidate.backend != Backend::Lt ? c.candidate.id()
                          : c.candidate.lt_padded             ? "lt+pad"
                          : c.candidate.lt_bias_in_gemm       ? "lt+bias"
                          : c.candidate.lt_epilogue_kernel    ? "lt+epi"
                                                              : "lt";
  return who + " on " + c.problem_kind;
}

GateResult compare_sweeps(const SweepResults& baseline, const SweepResults& current, const GateOptions& options) {
  if (baseline.device_key != current.device_key)
    throw InputError("the runs are of different devices: baseline " + baseline.source + " is '" +
                     baseline.device_key + "', current " + current.source + " is '" + current.device_key +
                     "'; timings only compare on the same device key");
  if (!(options.threshold_pct >= 0)) throw InputError("--threshold must be >= 0");
  if (!(options.lone_threshold_pct >= 0)) throw InputError("--lone-threshold must be >= 0");
  if (options.allow_missing < 0) throw InputError("--allow-missing must be >= 0");

  GateResult result;
  result.device_key = current.device_key;
  result.baseline_info = {baseline.source, baseline.device_key, baseline.profile, baseline.gemmtune_version, {}};
  result.current_info = {current.source, current.device_key, current.profile, current.gemmtune_version, {}};
  result.options = options;

  std::map<std::string, const CaseTiming*> base_by_key;
  std::set<std::string> base_problems;
  for (const CaseTiming& b : baseline.cases) {
    base_by_key.emplace(b.key, &b);
    base_problems.insert(b.problem_key);
  }
  std::map<std::string, const CaseTiming*> current_by_key;
  for (const CaseTiming& c : current.cases) current_by_key.emplace(c.key, &c);

  for (const CaseTiming& cur : current.cases) {
    const auto it = base_by_key.find(cur.key);
    const CaseTiming* base = it == base_by_key.end() ? nullptr : it->second;
    if (base != nullptr && base->ok() && cur.ok())
      result.cases.push_back(compare_case(*base, cur, options.threshold_pct));
    else if (base != nullptr && base->ok())
      result.missing.push_back({cur.key, "ok in the baseline, " + cur.status + " in the current run"});
    else if (cur.ok() && base != nullptr)
      result.new_cases.push_back({cur.key, "no baseline timing (" + base->status + " there)"});
    else if (cur.ok())
      result.new_cases.push_back(
          {cur.key, base_problems.count(cur.problem_key) != 0 ? "new candidate" : "new problem"});
  }
  const bool same_profile = baseline.profile == current.profile;
  for (const CaseTiming& base : baseline.cases) {
    if (!base.ok() || current_by_key.count(base.key) != 0) continue;
    if (same_profile)
      result.missing.push_back({base.key, "in the baseline, not in the current run of the same profile"});
    else
      ++result.not_in_profile;
  }

  require_more_than_luck(baseline, current, result);
  std::sort(result.cases.begin(), result.cases.end(), [](const CaseComparison& a, const CaseComparison& b) {
    if (a.verdict != b.verdict || a.ratio != b.ratio) return ranks_before(a.verdict, a.ratio, b.verdict, b.ratio);
    return a.key < b.key;
  });
  compare_problems(baseline, current, result);
  return result;
}

std::string gate_rule_text(const GateOptions& options) {
  char text[1024];
  std::snprintf(text, sizeof(text),
                "regressed = current median > baseline median x (1 + T/100) AND current p10 > baseline p90 "
                "(outside both runs' p10-p90 noise) AND median x SM clock > baseline's x (1 + T/100) (not explained "
                "by a lower clock), where T = max(%.4g, the baseline's run-to-run spread of the case); a case also "
                "needs more than one run's luck: it is its problem's fastest or chosen candidate in either run, or "
                "most of its family (the same candidate on the profile's other shapes of that problem kind) is over "
                "%.4g%% slower too, or it is over %.4g%% slower (else: isolated, not failed)%s",
                options.threshold_pct, options.threshold_pct, options.lone_threshold_pct,
                options.per_problem ? "; per problem, the same for the fastest and the cache's chosen candidate" : "");
  return text;
}

}  // namespace gemmtune
