#include <sstream>

#include "gate/report.hpp"

namespace gemmtune {
namespace {

// Keys contain '|' only inside the device key, never in a case key, but escape it anyway: it ends a table cell.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

bool notable(const CaseComparison& c) {
  return c.verdict != Verdict::Unchanged || c.within_noise || c.throttled || c.within_run_to_run || c.isolated;
}

std::string numbers(const CaseComparison& c) {
  return format_us(c.baseline.median_us) + " | " + format_us(c.current.median_us) + " | " + format_change(c.ratio) +
         " | " + format_us(c.baseline.p10_us) + "–" + format_us(c.baseline.p90_us) + " | " +
         format_us(c.current.p10_us) + "–" + format_us(c.current.p90_us) + " |\n";
}

void case_table(std::ostringstream& md, const std::vector<const CaseComparison*>& rows) {
  md << "| verdict | case | baseline µs | current µs | change | baseline p10–p90 | current p10–p90 |\n"
     << "|---|---|---:|---:|---:|---:|---:|\n";
  for (const CaseComparison* c : rows)
    md << "| " << verdict_label(*c) << " | `" << cell(c->key) << "` | " << numbers(*c);
}

std::string pick(const CaseComparison& c) {
  std::string text = "`" + cell(c.baseline.candidate.id()) + "`";
  if (c.baseline.key != c.current.key) text += " → `" + cell(c.current.candidate.id()) + "`";
  return text;
}

void problem_table(std::ostringstream& md, const std::vector<const ProblemComparison*>& rows) {
  md << "| verdict | problem | what | candidate | baseline µs | current µs | change | baseline p10–p90 | current "
        "p10–p90 |\n"
     << "|---|---|---|---|---:|---:|---:|---:|---:|\n";
  const auto line = [&](const ProblemComparison& p, const char* what, const CaseComparison& c) {
    md << "| " << verdict_label(c) << " | `" << cell(p.problem_key) << "` | " << what << " | " << pick(c) << " | "
       << numbers(c);
  };
  for (const ProblemComparison* p : rows) {
    line(*p, "best", p->best);
    line(*p, "chosen", p->chosen);
  }
}

}  // namespace

std::string gate_markdown(const GateResult& r) {
  std::ostringstream md;
  md << "### gemmtune gate: " << gate_headline(r) << "\n\n"
     << "- device: `" << r.device_key << "`\n"
     << "- baseline: `" << r.baseline_info.source << "` (profile " << r.baseline_info.profile << ")\n"
     << "- current: `" << r.current_info.source << "` (profile " << r.current_info.profile << ")\n"
     << "- rule: " << gate_rule_text(r.options) << "\n\n";

  // What a reviewer must look at stays open; what did not move is folded away.
  if (r.options.per_problem) {
    std::vector<const ProblemComparison*> moved, still;
    for (const ProblemComparison& p : r.problems)
      (p.verdict() != Verdict::Unchanged || notable(p.best) || notable(p.chosen) ? moved : still).push_back(&p);
    md << "#### Per problem (" << r.problems.size() << ": " << r.count_problems(Verdict::Regressed) << " regressed, "
       << r.count_problems(Verdict::Improved) << " improved)\n\n"
       << "best: each run's fastest verified candidate; chosen: the candidate the cache would keep.\n\n";
    if (!moved.empty()) problem_table(md, moved);
    if (!still.empty()) {
      md << "\n<details><summary>" << still.size() << " unchanged problem(s)</summary>\n\n";
      problem_table(md, still);
      md << "\n</details>\n";
    }
    md << "\n#### Per case (" << r.cases.size() << ")\n\n";
  }
  std::vector<const CaseComparison*> shown, quiet;
  for (const CaseComparison& c : r.cases) (notable(c) ? shown : quiet).push_back(&c);
  if (!shown.empty()) case_table(md, shown);
  if (!r.missing.empty()) {
    md << "\n**Not compared** (" << r.missing.size() << ", `--allow-missing " << r.options.allow_missing << "`):\n\n";
    for (const MissingCase& m : r.missing) md << "- `" << cell(m.key) << "`: " << m.why << "\n";
  }
  if (const std::string spared = spared_text(r); !spared.empty()) md << "\n" << spared;
  if (!quiet.empty()) {
    md << "\n<details><summary>" << quiet.size() << " unchanged case(s)</summary>\n\n";
    case_table(md, quiet);
    md << "\n</details>\n";
  }
  if (!r.new_cases.empty()) {
    md << "\n<details><summary>" << r.new_cases.size() << " new case(s), not gated (" << r.new_problems.size()
       << " new problem(s))</summary>\n\n";
    for (const NewCase& n : r.new_cases) md << "- `" << cell(n.key) << "`: " << n.why << "\n";
    md << "\n</details>\n";
  }
  return md.str();
}

}  // namespace gemmtune
