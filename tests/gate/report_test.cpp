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

TEST(GateReport, JunitHasOneTestcasePerProblemAndPerKeyAndAFailureOnlyForTheRegression) {
  const GateResult r = mixed_result();
  const std::string xml = gate_junit(r);
  const std::size_t cases_suite = xml.find("<testsuite name=\"gemmtune.gate\"");
  ASSERT_NE(cases_suite, std::string::npos) << xml;
  EXPECT_LT(xml.find("<testsuite name=\"gemmtune.gate.problems\" tests=\"4\" failures=\"0\""), cases_suite) << xml;
  EXPECT_EQ(occurrences(xml.substr(0, cases_suite), "<testcase "), 4u);
  EXPECT_EQ(occurrences(xml.substr(cases_suite), "<testcase "), 8u);
  EXPECT_EQ(occurrences(xml, "<failure "), 1u);
  EXPECT_EQ(occurrences(xml, "<error "), 1u);  // the missing case
  EXPECT_NE(xml.find("tests=\"8\" failures=\"1\" errors=\"1\" skipped=\"0\""), std::string::npos) << xml;
  const std::size_t failure = xml.find("<failure ");
  const std::size_t regressed_case = xml.find("name=\"" + r.cases.front().key + "\"");
  EXPECT_LT(regressed_case, failure);
  EXPECT_EQ(xml.find("<testcase", regressed_case + 1), xml.find("<testcase", failure));
}

TEST(GateReport, JunitFailsARegressedProblemAndSkipsNewCases) {
  const json base = test::sweep_document(8);
  json cur = test::sweep_document(10);  // cases 8 and 9: a new problem
  test::scale_all_results(cur, 1.2);
  const std::string xml = gate_junit(
      compare_sweeps(sweep_results_from_json(base, "base.json"), sweep_results_from_json(cur, "cur.json"), {}));
  EXPECT_NE(xml.find("<testsuite name=\"gemmtune.gate.problems\" tests=\"4\" failures=\"4\""), std::string::npos)
      << xml;
  EXPECT_EQ(occurrences(xml, "<skipped message=\"new, not gated: new problem\"/>"), 2u) << xml;
  EXPECT_NE(xml.find("<testsuites name=\"gemmtune gate\" tests=\"14\" failures=\"12\" errors=\"0\" skipped=\"2\""),
            std::string::npos)
      << xml;
}

TEST(GateReport, JunitEscapesXmlSpecialCharacters) {
  GateResult r = mixed_result();
  r.device_key = "GPU <\"&'>";
  const std::string xml = gate_junit(r);
  EXPECT_NE(xml.find("GPU &lt;&quot;&amp;&apos;&gt;"), std::string::npos);
  EXPECT_EQ(xml.find("GPU <"), std::string::npos);
}

TEST(GateReport, MarkdownShowsProblemsFirstThenTheRegressionOpenAndFoldsUnchangedCases) {
  const GateResult r = mixed_result();
  const std::string md = gate_markdown(r);
  EXPECT_EQ(md.rfind("### gemmtune gate: FAILED: 0 of 4 problems, 1 of 7 cases regressed", 0), 0u) << md;
  const std::size_t problems = md.find("#### Per problem (4: 0 regressed, 1 improved)");
  const std::size_t cases = md.find("#### Per case (7)");
  ASSERT_NE(problems, std::string::npos) << md;
  EXPECT_LT(problems, cases);
  EXPECT_LT(md.find("| improved | `"), cases);  // the problem whose best got faster
  const std::size_t details = md.find("<details><summary>5 unchanged case(s)");
  ASSERT_NE(details, std::string::npos) << md;
  EXPECT_LT(cases, md.find("| REGRESSED | `" + r.cases.front().key + "`"));
  EXPECT_LT(md.find("| REGRESSED | `" + r.cases.front().key + "`"), details);
  EXPECT_NE(md.find("**Not compared** (1"), std::string::npos);
}

TEST(GateReport, MarkdownListsNewCasesFolded) {
  const json base = test::sweep_document(8);
  const json cur = test::sweep_document(10);
  const std::string md = gate_markdown(
      compare_sweeps(sweep_results_from_json(base, "base.json"), sweep_results_from_json(cur, "cur.json"), {}));
  EXPECT_NE(md.find("PASSED: no regression in 4 problems, 8 cases (0 improved), 2 new case(s) not gated"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("<details><summary>2 new case(s), not gated (1 new problem(s))</summary>"), std::string::npos)
      << md;
  EXPECT_NE(md.find("- `" + test::result_key(cur, 9) + "`: new problem"), std::string::npos) << md;
}

TEST(GateReport, TableListsRegressionsFirstWithTheirRatio) {
  const GateResult r = mixed_result();
  std::ostringstream out;
  write_gate_table(out, r);
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("gemmtune gate: FAILED", 0), 0u) << text;
  const std::size_t problems = text.find("per problem (4)");
  const std::size_t cases = text.find("per case (7)");
  ASSERT_NE(problems, std::string::npos) << text;
  EXPECT_LT(problems, cases);
  const std::size_t regressed = text.find("REGRESSED", cases);
  EXPECT_NE(text.find("1.500x", regressed), std::string::npos);
  EXPECT_LT(regressed, text.find("improved", cases));
  EXPECT_LT(text.find("improved", cases), text.find("unchanged", cases));
}

TEST(GateReport, JsonCarriesTheOutcomeAndEveryCase) {
  const json j = gate_json(mixed_result());
  EXPECT_EQ(j["outcome"], "regressed");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["cases"].size(), 7u);
  EXPECT_EQ(j["missing"].size(), 1u);
  EXPECT_EQ(j["regressed"], 1);
  EXPECT_EQ(j["improved"], 1);
  EXPECT_EQ(j["problems"].size(), 4u);
  EXPECT_EQ(j["improved_problems"], 1);
  EXPECT_EQ(j["regressed_problems"], 0);
  EXPECT_EQ(j["new"].size(), 0u);
}

}  // namespace
}  // namespace gemmtune
