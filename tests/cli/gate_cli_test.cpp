// The gate as CI runs it: the real binary, sweep JSON files on disk, exit codes 0 / 1 / 2.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/run_gemmtune.hpp"
#include "support/scratch_dir.hpp"
#include "support/sweep_fixture.hpp"

namespace gemmtune {
namespace {

using nlohmann::json;
using test::run_gemmtune;

constexpr int kCases = 10;

class GateCli : public ::testing::Test {
 protected:
  test::CommandResult gate(const json& current, std::vector<std::string> extra = {}) {
    test::write_bytes(scratch.path("baseline.json"), baseline.dump());
    test::write_bytes(scratch.path("current.json"), current.dump());
    std::vector<std::string> args = {"gate", "--baseline", scratch.path("baseline.json"), "--current",
                                     scratch.path("current.json")};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_gemmtune(args);
  }
  // Lines of the per-case table that say REGRESSED (per-problem lines name "best" or "chosen" after the verdict).
  std::size_t regressed_lines(const std::string& output, const std::string& what = "      ") const {
    std::size_t n = 0;
    const std::string start = "\nREGRESSED    " + what + " ";
    for (std::size_t pos = output.find(start); pos != std::string::npos; pos = output.find(start, pos + 1)) ++n;
    return n;
  }
  test::ScratchDir scratch;
  json baseline = test::sweep_document(kCases);
};

TEST_F(GateCli, IdenticalRunsExitZero) {
  const auto r = gate(baseline);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PASSED: no regression in 5 problems, 10 cases"), std::string::npos) << r.output;
}

TEST_F(GateCli, EveryMedianTenPercentSlowerExitsOneNamingEveryCase) {
  json cur = baseline;
  test::scale_all_results(cur, 1.10);
  const auto r = gate(cur);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(regressed_lines(r.output), static_cast<std::size_t>(kCases)) << r.output;
  EXPECT_EQ(regressed_lines(r.output, "best  "), static_cast<std::size_t>(kCases / 2)) << r.output;
  EXPECT_EQ(regressed_lines(r.output, "chosen"), static_cast<std::size_t>(kCases / 2)) << r.output;
  for (int i = 0; i < kCases; ++i)
    EXPECT_NE(r.output.find(test::result_key(baseline, i)), std::string::npos) << i;
  EXPECT_NE(r.output.find("FAILED: 5 of 5 problems, 10 of 10 cases regressed"), std::string::npos) << r.output;
  EXPECT_LT(r.output.find("per problem"), r.output.find("per case")) << r.output;
}

TEST_F(GateCli, EveryMedianThreePercentSlowerPassesAtTheDefaultThreshold) {
  json cur = baseline;
  test::scale_all_results(cur, 1.03);
  const auto r = gate(cur);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PASSED"), std::string::npos) << r.output;
}

TEST_F(GateCli, OneCaseFiftyPercentSlowerExitsOneNamingExactlyThatCase) {
  json cur = baseline;
  test::scale_result(cur, 4, 1.5);
  const auto r = gate(cur, {"--junit", scratch.path("gate.xml"), "--markdown", scratch.path("gate.md"), "--json",
                            scratch.path("gate.json")});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  ASSERT_EQ(regressed_lines(r.output), 1u) << r.output;
  const std::size_t start = r.output.find("\nREGRESSED           ") + 1;
  const std::string line = r.output.substr(start, r.output.find('\n', start) - start);
  EXPECT_NE(line.find(test::result_key(baseline, 4)), std::string::npos) << line;
  // Its problem's fastest candidate is now the other one, 10% slower than case 4 was: the problem regressed too.
  EXPECT_EQ(regressed_lines(r.output, "best  "), 1u) << r.output;
  EXPECT_NE(r.output.find("FAILED: 1 of 5 problems, 1 of 10 cases regressed"), std::string::npos) << r.output;

  const std::string xml = test::read_bytes(scratch.path("gate.xml"));
  EXPECT_NE(xml.find("<testsuite name=\"gemmtune.gate.problems\" tests=\"5\" failures=\"1\""), std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testsuite name=\"gemmtune.gate\" tests=\"10\" failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(test::read_bytes(scratch.path("gate.md")).find("REGRESSED"), std::string::npos);
  const json report = json::parse(test::read_bytes(scratch.path("gate.json")));
  EXPECT_EQ(report["outcome"], "regressed");
  EXPECT_EQ(report["cases"][0]["key"], test::result_key(baseline, 4));
  EXPECT_EQ(report["regressed_problems"], 1);
  EXPECT_EQ(report["problems"][0]["verdict"], "regressed");
}

TEST_F(GateCli, NoisyCasesWithinTheirNoiseExitZero) {
  for (json& rec : baseline["results"]) {
    rec["p10_us"] = rec["median_us"].get<double>() * 0.75;
    rec["p90_us"] = rec["median_us"].get<double>() * 1.35;
  }
  json cur = baseline;
  test::scale_all_results(cur, 1.15);
  const auto r = gate(cur);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("within noise"), std::string::npos) << r.output;
}

TEST_F(GateCli, DifferentDeviceKeyExitsTwo) {
  const auto r = gate(test::sweep_document(kCases, "ci", "NVIDIA Other GPU"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("different devices"), std::string::npos) << r.output;
}

TEST_F(GateCli, MissingCasesExitTwoUnlessAllowed) {
  json cur = baseline;
  cur["results"].erase(3);  // the slower candidate of two problems: their best and chosen stay
  cur["results"].erase(6);
  EXPECT_EQ(gate(cur).exit_code, 2);
  EXPECT_EQ(gate(cur, {"--allow-missing", "1"}).exit_code, 2);
  const auto r = gate(cur, {"--allow-missing", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(GateCli, AllowedMissingFastestCandidateStillRegressesItsProblem) {
  json cur = baseline;
  cur["results"].erase(2);  // problem 1's fastest: a program using the cache now gets its 13% slower twin
  const auto r = gate(cur, {"--allow-missing", "1"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("FAILED: 1 of 5 problems, 0 of 9 cases regressed"), std::string::npos) << r.output;
  EXPECT_EQ(gate(cur, {"--allow-missing", "1", "--no-per-problem"}).exit_code, 0);
}

TEST_F(GateCli, UnreadableOrMalformedInputsExitTwo) {
  test::write_bytes(scratch.path("baseline.json"), baseline.dump());
  test::write_bytes(scratch.path("broken.json"), baseline.dump().substr(0, 200));
  for (const std::string& current : {scratch.path("broken.json"), scratch.path("absent.json")}) {
    const auto r = run_gemmtune({"gate", "--baseline", scratch.path("baseline.json"), "--current", current});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(current), std::string::npos) << r.output;
  }
  EXPECT_EQ(run_gemmtune({"gate", "--baseline", scratch.path("baseline.json")}).exit_code, 2);
  EXPECT_EQ(run_gemmtune({"gate", "--baseline", scratch.path("baseline.json"), "--current",
                          scratch.path("baseline.json"), "--threshold", "-3"})
                .exit_code,
            2);
}

TEST_F(GateCli, NewCandidatesAndProblemsAreListedAsNewAndExitZero) {
  const json cur = test::sweep_document(kCases + 2);  // one more problem, two more candidates
  const auto r = gate(cur, {"--markdown", scratch.path("gate.md"), "--json", scratch.path("gate.json")});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2 new case(s) not gated"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("new (2, not gated"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(test::result_key(cur, kCases) + ": new problem"), std::string::npos) << r.output;
  const json report = json::parse(test::read_bytes(scratch.path("gate.json")));
  EXPECT_EQ(report["new"].size(), 2u);
  EXPECT_EQ(report["new_problems"].size(), 1u);
  EXPECT_EQ(report["missing"].size(), 0u);
}

TEST_F(GateCli, CombinedBaselineKeepsAJitteryCaseFromFailingAndSaysSo) {
  json second = baseline;
  test::scale_result(second, 4, 1.09);  // case 4 moved 9% between two runs recorded together
  test::write_bytes(scratch.path("run1.json"), baseline.dump());
  test::write_bytes(scratch.path("run2.json"), second.dump());
  const auto made = run_gemmtune({"gate", "--combine-baseline", scratch.path("combined.json"), scratch.path("run1.json"),
                                  scratch.path("run2.json"), "--note", "git_commit=abc123"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  EXPECT_NE(made.output.find("from 2 runs: 10 timed cases, largest run-to-run spread +9.0%"), std::string::npos)
      << made.output;
  const json combined = json::parse(test::read_bytes(scratch.path("combined.json")));
  EXPECT_EQ(combined["baseline"]["recorded"]["git_commit"], "abc123");
  EXPECT_EQ(combined["problems"].size(), 5u);  // the sweep's per-problem summary, over the combined records

  json cur = baseline;
  test::scale_result(cur, 4, 1.08);
  test::write_bytes(scratch.path("current.json"), cur.dump());
  const auto r = run_gemmtune({"gate", "--baseline", scratch.path("combined.json"), "--current",
                               scratch.path("current.json")});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("run-to-run"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("within the baseline's run-to-run spread"), std::string::npos) << r.output;
  EXPECT_EQ(gate(cur).exit_code, 1);  // against the plain first run, the same current run fails
}

TEST_F(GateCli, CombiningOneRunOrNoneIsBadUsage) {
  test::write_bytes(scratch.path("run1.json"), baseline.dump());
  const auto r = run_gemmtune({"gate", "--combine-baseline", scratch.path("b.json"), scratch.path("run1.json")});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("at least two sweeps"), std::string::npos) << r.output;
}

TEST_F(GateCli, ModesDoNotMix) {
  test::write_bytes(scratch.path("run1.json"), baseline.dump());
  const std::string run1 = scratch.path("run1.json");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"gate"},
        {"gate", "--baseline", run1, "--current", run1, "--check-baseline", run1, "--profile", "ci"},
        {"gate", "--baseline", run1, "--current", run1, "--combine-baseline", scratch.path("b.json"), run1, run1},
        {"gate", "--baseline", run1, "--current", run1, run1},
        {"gate", "--baseline", run1, "--current", run1, "--profile", "ci"},
        {"gate", "--check-baseline", run1}}) {
    const auto r = run_gemmtune(args);
    EXPECT_EQ(r.exit_code, 2) << r.output;
  }
}

class CheckBaselineCli : public ::testing::Test {
 protected:
  test::CommandResult check(const json& doc) {
    test::write_bytes(scratch.path("baseline.json"), doc.dump());
    return run_gemmtune({"gate", "--check-baseline", scratch.path("baseline.json"), "--profile", "ci"});
  }
  test::ScratchDir scratch;
  json matching = test::sweep_document_for_plan(test::source_tree_plan_keys("ci"));
};

TEST_F(CheckBaselineCli, BaselineMatchingThePlanExitsZero) {
  const auto r = check(matching);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("is current"), std::string::npos) << r.output;
}

TEST_F(CheckBaselineCli, StaleOrMissingEntriesExitOneWithTheFixCommand) {
  json doc = matching;
  std::string removed;
  for (std::size_t i = 0; i < doc["results"].size() && removed.empty(); ++i)
    if (doc["results"][i]["candidate"]["backend"] == "own") {
      removed = test::result_key(doc, i);
      doc["results"].erase(i);
    }
  const auto r = check(doc);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("missing: " + removed), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("scripts/record_baseline.sh"), std::string::npos) << r.output;
}

TEST_F(CheckBaselineCli, CombinedBaselineOfThePlanPasses) {
  json second = matching;
  test::scale_all_results(second, 1.02);
  test::write_bytes(scratch.path("run1.json"), matching.dump());
  test::write_bytes(scratch.path("run2.json"), second.dump());
  ASSERT_EQ(run_gemmtune({"gate", "--combine-baseline", scratch.path("combined.json"), scratch.path("run1.json"),
                          scratch.path("run2.json")})
                .exit_code,
            0);
  const auto r = run_gemmtune({"gate", "--check-baseline", scratch.path("combined.json"), "--profile", "ci"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(CheckBaselineCli, UnreadableBaselineOrUnknownProfileExitsTwo) {
  EXPECT_EQ(run_gemmtune({"gate", "--check-baseline", scratch.path("absent.json"), "--profile", "ci"}).exit_code, 2);
  test::write_bytes(scratch.path("baseline.json"), matching.dump());
  EXPECT_EQ(
      run_gemmtune({"gate", "--check-baseline", scratch.path("baseline.json"), "--profile", "no-such"}).exit_code, 2);
}

}  // namespace
}  // namespace gemmtune
