#include "gate/report.hpp"

#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/sweep_fixture.hpp"

namespace gemmtune {
namespace {

using nlohmann::json;

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

// Eight cases: case 3 regressed (x1.5), case 6 improved (x0.5), one case missing from the current run.
GateResult mixed_result() {
  const json base = test::sweep_document(8);
  json cur = base;
  test::scale_result(cur, 3, 1.5);
  test::scale_result(cur, 6, 0.5);
  cur["results"].erase(7);
  GateOptions options;
  options.allow_missing = 1;
  return compare_sweeps(sweep_results_from_json(base, "base.json"), sweep_results_from_json(cur, "cur.json"),
                        options);
}

TEST(GateReport, JunitHasOneTestcasePerKeyAndAFailureOnlyForTheRegression) {
  const GateResult r = mixed_result();
  const std::string xml = gate_junit(r);
  EXPECT_EQ(occurrences(xml, "<testcase "), 8u);
  EXPECT_EQ(occurrences(xml, "<failure "), 1u);
  EXPECT_EQ(occurrences(xml, "<error "), 1u);  // the missing case
  EXPECT_NE(xml.find("tests=\"8\" failures=\"1\" errors=\"1\""), std::string::npos) << xml;
  const std::size_t failure = xml.find("<failure ");
  const std::size_t regressed_case = xml.find("name=\"" + r.cases.front().key + "\"");
  EXPECT_LT(regressed_case, failure);
  EXPECT_EQ(xml.find("<testcase", regressed_case + 1), xml.find("<testcase", failure));
}

TEST(GateReport, JunitEscapesXmlSpecialCharacters) {
  GateResult r = mixed_result();
  r.device_key = "GPU <\"&'>";
  const std::string xml = gate_junit(r);
  EXPECT_NE(xml.find("GPU &lt;&quot;&amp;&apos;&gt;"), std::string::npos);
  EXPECT_EQ(xml.find("GPU <"), std::string::npos);
}

TEST(GateReport, MarkdownShowsTheRegressionOpenAndFoldsUnchangedCases) {
  const GateResult r = mixed_result();
  const std::string md = gate_markdown(r);
  EXPECT_EQ(md.rfind("### gemmtune gate: FAILED: 1 of 7 cases regressed", 0), 0u) << md;
  const std::size_t details = md.find("<details>");
  ASSERT_NE(details, std::string::npos);
  EXPECT_LT(md.find("| REGRESSED | `" + r.cases.front().key + "`"), details);
  EXPECT_LT(md.find("| improved |"), details);
  EXPECT_NE(md.find("5 unchanged case(s)"), std::string::npos);
  EXPECT_NE(md.find("**Not compared** (1"), std::string::npos);
}

TEST(GateReport, TableListsRegressionsFirstWithTheirRatio) {
  const GateResult r = mixed_result();
  std::ostringstream out;
  write_gate_table(out, r);
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("gemmtune gate: FAILED", 0), 0u) << text;
  const std::size_t regressed = text.find("REGRESSED");
  EXPECT_NE(text.find("1.500x", regressed), std::string::npos);
  EXPECT_LT(regressed, text.find("improved"));
  EXPECT_LT(text.find("improved"), text.find("unchanged"));
}

TEST(GateReport, JsonCarriesTheOutcomeAndEveryCase) {
  const json j = gate_json(mixed_result());
  EXPECT_EQ(j["outcome"], "regressed");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["cases"].size(), 7u);
  EXPECT_EQ(j["missing"].size(), 1u);
  EXPECT_EQ(j["regressed"], 1);
  EXPECT_EQ(j["improved"], 1);
}

}  // namespace
}  // namespace gemmtune
