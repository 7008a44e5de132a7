#include <cstdio>
#include <ostream>

#include "gate/report.hpp"

namespace gemmtune {
namespace {

std::string range_text(const CaseTiming& t) { return format_us(t.p10_us) + "-" + format_us(t.p90_us); }

void header(std::ostream& out, const char* what, const char* name) {
  char line[256];
  std::snprintf(line, sizeof(line), "%-12s %-6s %8s %8s %10s %10s %19s %19s  %s\n", "verdict", what, "change", "ratio",
                "base us", "cur us", "base p10-p90", "cur p10-p90", name);
  out << line;
}

void row(std::ostream& out, const CaseComparison& c, const char* what, const std::string& name) {
  char line[1024];
  std::snprintf(line, sizeof(line), "%-12s %-6s %8s %7.3fx %10s %10s %19s %19s  %s\n", verdict_label(c).c_str(), what,
                format_change(c.ratio).c_str(), c.ratio, format_us(c.baseline.median_us).c_str(),
                format_us(c.current.median_us).c_str(), range_text(c.baseline).c_str(), range_text(c.current).c_str(),
                name.c_str());
  out << line;
}

// "fwd:...:tf32 own/a" or, when the runs' picks differ, "fwd:...:tf32 own/a -> own/b".
std::string pick_text(const std::string& problem_key, const CaseComparison& c) {
  std::string text = problem_key + " " + c.baseline.candidate.id();
  if (c.baseline.key != c.current.key) text += " -> " + c.current.candidate.id();
  return text;
}

}  // namespace

void write_gate_table(std::ostream& out, const GateResult& r) {
  out << "gemmtune gate: " << gate_headline(r) << "\n"
      << "device:   " << r.device_key << "\n"
      << "baseline: " << r.baseline_info.source << " (profile " << r.baseline_info.profile << ", gemmtune "
      << r.baseline_info.gemmtune_version << ")\n"
      << "current:  " << r.current_info.source << " (profile " << r.current_info.profile << ", gemmtune "
      << r.current_info.gemmtune_version << ")\n"
      << "rule:     " << gate_rule_text(r.options) << "\n\n";

  if (r.options.per_problem) {
    out << "per problem (" << r.problems.size() << "): " << r.count_problems(Verdict::Regressed) << " regressed, "
        << r.count_problems(Verdict::Improved)
        << " improved; best = each run's fastest verified candidate, chosen = the one the cache would keep\n";
    header(out, "what", "problem and candidate (baseline -> current)");
    for (const ProblemComparison& p : r.problems) {
      row(out, p.best, "best", pick_text(p.problem_key, p.best));
      row(out, p.chosen, "chosen", pick_text(p.problem_key, p.chosen));
    }
    out << "\nper case (" << r.cases.size() << "):\n";
  }
  header(out, "", "key");
  for (const CaseComparison& c : r.cases) row(out, c, "", c.key);

  if (!r.new_cases.empty()) {
    out << "\nnew (" << r.new_cases.size() << ", not gated: the baseline has no timing for them";
    if (!r.new_problems.empty()) out << "; " << r.new_problems.size() << " new problem(s)";
    out << "):\n";
    for (const NewCase& n : r.new_cases) out << "  " << n.key << ": " << n.why << "\n";
  }
  if (!r.missing.empty()) {
    out << "\nnot compared (" << r.missing.size() << ", --allow-missing " << r.options.allow_missing << "):\n";
    for (const MissingCase& m : r.missing) out << "  " << m.key << ": " << m.why << "\n";
  }
  if (const std::string spared = spared_text(r); !spared.empty()) out << "\n" << spared;
  if (r.not_in_profile > 0)
    out << "\n" << r.not_in_profile << " baseline case(s) are outside the current run's profile (not compared)\n";
}

}  // namespace gemmtune
