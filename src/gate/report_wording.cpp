#include <cstdio>

#include "gate/report.hpp"

namespace gemmtune {

std::string verdict_label(const CaseComparison& c) {
  if (c.verdict == Verdict::Regressed) return "REGRESSED";
  if (c.verdict == Verdict::Improved) return "improved";
  if (c.throttled) return "throttled";
  return c.within_noise ? "within noise" : "unchanged";
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

std::string gate_headline(const GateResult& r) {
  const int compared = static_cast<int>(r.cases.size());
  const int missing = static_cast<int>(r.missing.size());
  switch (r.outcome()) {
    case GateOutcome::InputsDiffer:
      return "INPUTS DIFFER: " + std::to_string(missing) + " case(s) could not be compared (--allow-missing " +
             std::to_string(r.options.allow_missing) + ")";
    case GateOutcome::Regressed:
      return "FAILED: " + std::to_string(r.count(Verdict::Regressed)) + " of " + std::to_string(compared) +
             " cases regressed";
    case GateOutcome::Passed:
      break;
  }
  return "PASSED: no regression in " + std::to_string(compared) + " cases (" +
         std::to_string(r.count(Verdict::Improved)) + " improved)";
}

}  // namespace gemmtune
