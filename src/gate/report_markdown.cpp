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

void table(std::ostringstream& md, const std::vector<const CaseComparison*>& rows) {
  md << "| verdict | case | baseline µs | current µs | change | baseline p10–p90 | current p10–p90 |\n"
     << "|---|---|---:|---:|---:|---:|---:|\n";
  for (const CaseComparison* c : rows)
    md << "| " << verdict_label(*c) << " | `" << cell(c->key) << "` | " << format_us(c->baseline.median_us) << " | "
       << format_us(c->current.median_us) << " | " << format_change(c->ratio) << " | "
       << format_us(c->baseline.p10_us) << "–" << format_us(c->baseline.p90_us) << " | "
       << format_us(c->current.p10_us) << "–" << format_us(c->current.p90_us) << " |\n";
}

}  // namespace

std::string gate_markdown(const GateResult& r) {
  std::ostringstream md;
  md << "### gemmtune gate: " << gate_headline(r) << "\n\n"
     << "- device: `" << r.device_key << "`\n"
     << "- baseline: `" << r.baseline_info.source << "` (profile " << r.baseline_info.profile << ")\n"
     << "- current: `" << r.current_info.source << "` (profile " << r.current_info.profile << ")\n"
     << "- rule: " << gate_rule_text(r.options) << "\n\n";

  // What a reviewer must look at stays open; the cases that did not move are folded away.
  std::vector<const CaseComparison*> notable, quiet;
  for (const CaseComparison& c : r.cases)
    (c.verdict != Verdict::Unchanged || c.within_noise || c.throttled ? notable : quiet).push_back(&c);
  if (!notable.empty()) table(md, notable);
  if (!r.missing.empty()) {
    md << "\n**Not compared** (" << r.missing.size() << ", `--allow-missing " << r.options.allow_missing << "`):\n\n";
    for (const MissingCase& m : r.missing) md << "- `" << cell(m.key) << "`: " << m.why << "\n";
  }
  if (!quiet.empty()) {
    md << "\n<details><summary>" << quiet.size() << " unchanged case(s)</summary>\n\n";
    table(md, quiet);
    md << "\n</details>\n";
  }
  return md.str();
}

}  // namespace gemmtune
