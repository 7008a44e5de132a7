#include <cstdio>

#include "gate/report.hpp"

namespace gemmtune {
namespace {

std::string comparison_text(const char* what, const CaseComparison& c) {
  std::string text = std::string(what) + " " + format_change(c.ratio) + " (" + c.baseline.candidate.id();
  if (c.baseline.key != c.current.key) text += " -> " + c.current.candidate.id();
  return text + ", " + verdict_label(c) + ")";
}

}  // namespace

std::string verdict_label(const CaseComparison& c) {
  if (c.verdict == Verdict::Regressed) return "REGRESSED";
  if (c.verdict == Verdict::Improved) return "improved";
  if (c.within_run_to_run) return "run-to-run";
  if (c.isolated) return "isolated";
  if (c.throttled) return "throttled";
  return c.within_noise ? "within noise" : "unchanged";
}

std::string verdict_label(const ProblemComparison& p) {
  switch (p.verdict()) {
    case Verdict::Regressed: return "REGRESSED";
    case Verdict::Improved: return "improved";
    case Verdict::Unchanged: break;
  }
  return "unchanged";
}

std::string format_change(double ratio) {
  char text[32];
  std::snprintf(text, sizeof(text), "%+.1f%%", (ratio - 1.0) * 100.0);
  return text;
}

std::string format_us(double us) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", us);
  return text;
}

std::string problem_change_text(const ProblemComparison& p) {
  return comparison_text("best", p.best) + "; " + comparison_text("chosen", p.chosen);
}

std::string spared_text(const GateResult& r) {
  char threshold[32];
  std::snprintf(threshold, sizeof(threshold), "%.4g%%", r.options.threshold_pct);
  std::string text;
  if (const int spared = r.count_within_run_to_run(); spared > 0)
    text += std::to_string(spared) + " comparison(s) slower than --threshold " + threshold +
            " but within the baseline's run-to-run spread (verdict run-to-run): not failed\n";
  if (const int isolated = r.count_isolated(); isolated > 0) {
    char lone[32];
    std::snprintf(lone, sizeof(lone), "%.4g%%", r.options.lone_threshold_pct);
    text += std::to_string(isolated) + " case(s) slower beyond --threshold " + threshold +
            " and the noise, but alone: no problem's fastest or chosen candidate, most of their family not slower, "
            "and under --lone-threshold " + lone + " (verdict isolated): not failed\n";
  }
  return text;
}

std::string gate_headline(const GateResult& r) {
  const int compared = static_cast<int>(r.cases.size());
  const int missing = static_cast<int>(r.missing.size());
  const std::string problems = std::to_string(r.problems.size()) + " problems, ";
  const std::string new_count =
      r.new_cases.empty() ? "" : ", " + std::to_string(r.new_cases.size()) + " new case(s) not gated";
  switch (r.outcome()) {
    case GateOutcome::InputsDiffer:
      return "INPUTS DIFFER: " + std::to_string(missing) + " baseline case(s) could not be compared " +
             "(--allow-missing " + std::to_string(r.options.allow_missing) + ")";
    case GateOutcome::Regressed:
      return "FAILED: " +
             (r.options.per_problem
                  ? std::to_string(r.count_problems(Verdict::Regressed)) + " of " + problems
                  : std::string()) +
             std::to_string(r.count(Verdict::Regressed)) + " of " + std::to_string(compared) + " cases regressed" +
             new_count;
    case GateOutcome::Passed:
      break;
  }
  return "PASSED: no regression in " + (r.options.per_problem ? problems : std::string()) + std::to_string(compared) +
         " cases (" + std::to_string(r.count(Verdict::Improved)) + " improved)" + new_count;
}

}  // namespace gemmtune
