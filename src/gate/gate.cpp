#include "gate/gate.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "common/error.hpp"

namespace gemmtune {

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

int GateResult::count(Verdict v) const {
  const auto has_verdict = [v](const CaseComparison& c) { return c.verdict == v; };
  return static_cast<int>(std::count_if(cases.begin(), cases.end(), has_verdict));
}

GateOutcome GateResult::outcome() const {
  if (static_cast<int>(missing.size()) > options.allow_missing) return GateOutcome::InputsDiffer;
  return count(Verdict::Regressed) > 0 ? GateOutcome::Regressed : GateOutcome::Passed;
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
  const double factor = 1.0 + threshold_pct / 100.0;
  const bool slower = current.median_us > baseline.median_us * factor;
  const bool faster = current.median_us < baseline.median_us / factor;
  // A GPU that ran at a lower SM clock (power or thermal limits) is slow, not the code: when the clock drop accounts
  // for the slowdown, i.e. the time in clock cycles (median × clock) is within the threshold, it is no regression.
  const bool clocks_known = baseline.sm_clock_mhz > 0 && current.sm_clock_mhz > 0;
  const bool cycles_slower = !clocks_known || current.median_us * current.sm_clock_mhz >
                                                  baseline.median_us * baseline.sm_clock_mhz * factor;
  if (slower && current.p10_us > baseline.p90_us && !cycles_slower)
    c.throttled = true;
  else if (slower && current.p10_us > baseline.p90_us)
    c.verdict = Verdict::Regressed;
  else if (faster && current.p90_us < baseline.p10_us)
    c.verdict = Verdict::Improved;
  else
    c.within_noise = slower || faster;
  return c;
}

GateResult compare_sweeps(const SweepResults& baseline, const SweepResults& current, const GateOptions& options) {
  if (baseline.device_key != current.device_key)
    throw InputError("the runs are of different devices: baseline " + baseline.source + " is '" +
                     baseline.device_key + "', current " + current.source + " is '" + current.device_key +
                     "'; timings only compare on the same device key");
  if (!(options.threshold_pct >= 0)) throw InputError("--threshold must be >= 0");
  if (options.allow_missing < 0) throw InputError("--allow-missing must be >= 0");

  GateResult result;
  result.device_key = current.device_key;
  result.baseline_info = {baseline.source, baseline.device_key, baseline.profile, baseline.gemmtune_version, {}};
  result.current_info = {current.source, current.device_key, current.profile, current.gemmtune_version, {}};
  result.options = options;

  std::map<std::string, const CaseTiming*> base_by_key;
  for (const CaseTiming& b : baseline.cases) base_by_key.emplace(b.key, &b);
  std::map<std::string, const CaseTiming*> current_by_key;
  for (const CaseTiming& c : current.cases) current_by_key.emplace(c.key, &c);

  for (const CaseTiming& cur : current.cases) {
    const auto it = base_by_key.find(cur.key);
    const CaseTiming* base = it == base_by_key.end() ? nullptr : it->second;
    if (base != nullptr && base->ok() && cur.ok())
      result.cases.push_back(compare_case(*base, cur, options.threshold_pct));
    else if (base != nullptr && base->ok())
      result.missing.push_back({cur.key, "ok in the baseline, " + cur.status + " in the current run"});
    else if (cur.ok())
      result.missing.push_back({cur.key, base == nullptr ? "not in the baseline"
                                                         : "no baseline timing (" + base->status + " there)"});
  }
  const bool same_profile = baseline.profile == current.profile;
  for (const CaseTiming& base : baseline.cases) {
    if (!base.ok() || current_by_key.count(base.key) != 0) continue;
    if (same_profile)
      result.missing.push_back({base.key, "in the baseline, not in the current run of the same profile"});
    else
      ++result.not_in_profile;
  }

  const auto rank = [](const CaseComparison& c) { return static_cast<int>(c.verdict); };
  std::sort(result.cases.begin(), result.cases.end(), [&](const CaseComparison& a, const CaseComparison& b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    if (a.ratio != b.ratio) return a.verdict == Verdict::Improved ? a.ratio < b.ratio : a.ratio > b.ratio;
    return a.key < b.key;
  });
  return result;
}

std::string gate_rule_text(const GateOptions& options) {
  char text[384];
  std::snprintf(text, sizeof(text),
                "regressed = current median > baseline median x %.4g AND current p10 > baseline p90 "
                "(outside both runs' p10-p90 noise) AND median x SM clock > baseline's x %.4g (not explained by a lower clock)",
                1.0 + options.threshold_pct / 100.0, 1.0 + options.threshold_pct / 100.0);
  return text;
}

}  // namespace gemmtune
