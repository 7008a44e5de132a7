#include <sstream>

#include "gate/report.hpp"

namespace gemmtune {
namespace {

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string timing_text(const char* which, const CaseTiming& t) {
  return std::string(which) + " median " + format_us(t.median_us) + " us (p10 " + format_us(t.p10_us) + ", p90 " +
         format_us(t.p90_us) + ", " + std::to_string(t.samples) + " samples)";
}

}  // namespace

std::string gate_junit(const GateResult& r) {
  const int tests = static_cast<int>(r.cases.size() + r.missing.size());
  const int failures = r.count(Verdict::Regressed);
  const int errors = static_cast<int>(r.missing.size());
  std::ostringstream xml;
  xml << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"gemmtune gate\" tests=\"" << tests << "\" failures=\"" << failures << "\" errors=\""
      << errors << "\">\n"
      << "  <testsuite name=\"gemmtune.gate\" tests=\"" << tests << "\" failures=\"" << failures << "\" errors=\""
      << errors << "\" skipped=\"0\">\n"
      << "    <properties>\n"
      << "      <property name=\"device_key\" value=\"" << xml_escape(r.device_key) << "\"/>\n"
      << "      <property name=\"rule\" value=\"" << xml_escape(gate_rule_text(r.options)) << "\"/>\n"
      << "    </properties>\n";
  for (const CaseComparison& c : r.cases) {
    xml << "    <testcase classname=\"gemmtune.gate\" name=\"" << xml_escape(c.key) << "\"";
    if (c.verdict != Verdict::Regressed) {
      xml << "/>\n";
      continue;
    }
    const std::string message = format_change(c.ratio) + " slower: " + format_us(c.baseline.median_us) + " -> " +
                                format_us(c.current.median_us) + " us";
    xml << ">\n      <failure type=\"regression\" message=\"" << xml_escape(message) << "\">"
        << xml_escape(timing_text("baseline", c.baseline) + "\n" + timing_text("current", c.current) + "\n" +
                      gate_rule_text(r.options))
        << "</failure>\n    </testcase>\n";
  }
  for (const MissingCase& m : r.missing)
    xml << "    <testcase classname=\"gemmtune.gate\" name=\"" << xml_escape(m.key) << "\">\n"
        << "      <error type=\"not_compared\" message=\"" << xml_escape(m.why) << "\"/>\n    </testcase>\n";
  xml << "  </testsuite>\n</testsuites>\n";
  return xml.str();
}

}  // namespace gemmtune
