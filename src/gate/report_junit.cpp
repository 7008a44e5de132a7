#include <cstdio>
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
  return std::string(which) + " " + t.key + ": median " + format_us(t.median_us) + " us (p10 " +
         format_us(t.p10_us) + ", p90 " + format_us(t.p90_us) + ", " + std::to_string(t.samples) + " samples)";
}

std::string details(const CaseComparison& c, const GateOptions& options) {
  char threshold[64];
  std::snprintf(threshold, sizeof(threshold), "threshold %.4g%%", c.threshold_pct);
  return timing_text("baseline", c.baseline) + "\n" + timing_text("current", c.current) + "\n" + threshold + "\n" +
         gate_rule_text(options);
}

void suite_open(std::ostringstream& xml, const char* name, int tests, int failures, int errors, int skipped) {
  xml << "  <testsuite name=\"" << name << "\" tests=\"" << tests << "\" failures=\"" << failures << "\" errors=\""
      << errors << "\" skipped=\"" << skipped << "\">\n";
}

void testcase(std::ostringstream& xml, const char* classname, const std::string& name, const std::string& body) {
  xml << "    <testcase classname=\"" << classname << "\" name=\"" << xml_escape(name) << "\"";
  if (body.empty())
    xml << "/>\n";
  else
    xml << ">\n      " << body << "\n    </testcase>\n";
}

std::string failure(const std::string& message, const std::string& text) {
  return "<failure type=\"regression\" message=\"" + xml_escape(message) + "\">" + xml_escape(text) + "</failure>";
}

}  // namespace

std::string gate_junit(const GateResult& r) {
  const int problems = static_cast<int>(r.problems.size());
  const int problem_failures = r.count_problems(Verdict::Regressed);
  const int cases = static_cast<int>(r.cases.size() + r.missing.size() + r.new_cases.size());
  const int case_failures = r.count(Verdict::Regressed);
  const int errors = static_cast<int>(r.missing.size());
  const int skipped = static_cast<int>(r.new_cases.size());
  std::ostringstream xml;
  xml << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"gemmtune gate\" tests=\"" << problems + cases << "\" failures=\""
      << problem_failures + case_failures << "\" errors=\"" << errors << "\" skipped=\"" << skipped << "\">\n";

  // Problems first: what a program using the cache gets.
  if (r.options.per_problem) {
    suite_open(xml, "gemmtune.gate.problems", problems, problem_failures, 0, 0);
    for (const ProblemComparison& p : r.problems) {
      std::string body;
      if (p.verdict() == Verdict::Regressed)
        body = failure(problem_change_text(p), "best:\n" + details(p.best, r.options) + "\nchosen:\n" +
                                                   details(p.chosen, r.options));
      testcase(xml, "gemmtune.gate.problems", p.problem_key, body);
    }
    xml << "  </testsuite>\n";
  }

  suite_open(xml, "gemmtune.gate", cases, case_failures, errors, skipped);
  xml << "    <properties>\n"
      << "      <property name=\"device_key\" value=\"" << xml_escape(r.device_key) << "\"/>\n"
      << "      <property name=\"rule\" value=\"" << xml_escape(gate_rule_text(r.options)) << "\"/>\n"
      << "    </properties>\n";
  for (const CaseComparison& c : r.cases) {
    std::string body;
    if (c.verdict == Verdict::Regressed)
      body = failure(format_change(c.ratio) + " slower: " + format_us(c.baseline.median_us) + " -> " +
                         format_us(c.current.median_us) + " us",
                     details(c, r.options));
    testcase(xml, "gemmtune.gate", c.key, body);
  }
  for (const MissingCase& m : r.missing)
    testcase(xml, "gemmtune.gate", m.key, "<error type=\"not_compared\" message=\"" + xml_escape(m.why) + "\"/>");
  for (const NewCase& n : r.new_cases)
    testcase(xml, "gemmtune.gate", n.key, "<skipped message=\"new, not gated: " + xml_escape(n.why) + "\"/>");
  xml << "  </testsuite>\n</testsuites>\n";
  return xml.str();
}

}  // namespace gemmtune
