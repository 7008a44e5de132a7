#include <cstdio>
#include <ostream>

#include "gate/report.hpp"

namespace gemmtune {
namespace {

std::string range_text(const CaseTiming& t) { return format_us(t.p10_us) + "-" + format_us(t.p90_us); }

}  // namespace

void write_gate_table(std::ostream& out, const GateResult& r) {
  out << "gemmtune gate: " << gate_headline(r) << "\n"
      << "device:   " << r.device_key << "\n"
      << "baseline: " << r.baseline_info.source << " (profile " << r.baseline_info.profile << ", gemmtune "
      << r.baseline_info.gemmtune_version << ")\n"
      << "current:  " << r.current_info.source << " (profile " << r.current_info.profile << ", gemmtune "
      << r.current_info.gemmtune_version << ")\n"
      << "rule:     " << gate_rule_text(r.options) << "\n\n";

  char line[1024];
  std::snprintf(line, sizeof(line), "%-12s %8s %8s %10s %10s %19s %19s  %s\n", "verdict", "change", "ratio",
                "base us", "cur us", "base p10-p90", "cur p10-p90", "key");
  out << line;
  for (const CaseComparison& c : r.cases) {
    std::snprintf(line, sizeof(line), "%-12s %8s %7.3fx %10s %10s %19s %19s  %s\n", verdict_label(c).c_str(),
                  format_change(c.ratio).c_str(), c.ratio, format_us(c.baseline.median_us).c_str(),
                  format_us(c.current.median_us).c_str(), range_text(c.baseline).c_str(),
                  range_text(c.current).c_str(), c.key.c_str());
    out << line;
  }
  if (!r.missing.empty()) {
    out << "\nnot compared (" << r.missing.size() << ", --allow-missing " << r.options.allow_missing << "):\n";
    for (const MissingCase& m : r.missing) out << "  " << m.key << ": " << m.why << "\n";
  }
  if (r.not_in_profile > 0)
    out << "\n" << r.not_in_profile << " baseline case(s) are outside the current run's profile (not compared)\n";
}

}  // namespace gemmtune
