#include "gate/gate.hpp"
#include "gate/report.hpp"

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "support/sweep_fixture.hpp"

namespace gemmtune {
namespace {

using nlohmann::json;

constexpr int kCases = 12;

GateResult gate(const json& baseline, const json& current, GateOptions options = {}) {
  return compare_sweeps(sweep_results_from_json(baseline, "baseline.json"),
                        sweep_results_from_json(current, "current.json"), options);
}

std::vector<std::string> keys_with(const GateResult& r, Verdict v) {
  std::vector<std::string> keys;
  for (const CaseComparison& c : r.cases)
    if (c.verdict == v) keys.push_back(c.key);
  return keys;
}

CaseTiming timing(double median, double p10, double p90) { return {"case", "ok", median, p10, p90, 30}; }

TEST(Gate, IdenticalRunsPass) {
  const json base = test::sweep_document(kCases);
  const GateResult r = gate(base, base);
  EXPECT_EQ(r.outcome(), GateOutcome::Passed);
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_EQ(r.cases.size(), static_cast<std::size_t>(kCases));
  EXPECT_EQ(r.count(Verdict::Unchanged), kCases);
}

TEST(Gate, EveryCaseTenPercentSlowerRegressesEveryCase) {
  const json base = test::sweep_document(kCases);
  json cur = base;
  test::scale_all_results(cur, 1.10);
  const GateResult r = gate(base, cur);
  EXPECT_EQ(r.outcome(), GateOutcome::Regressed);
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(r.count(Verdict::Regressed), kCases);
}

TEST(Gate, EveryCaseThreePercentSlowerPassesAtTheDefaultThreshold) {
  json base = test::sweep_document(kCases);
  for (json& r : base["results"]) {  // +-0.5%: so tight that only the threshold can let +3% pass
    r["p10_us"] = r["median_us"].get<double>() * 0.995;
    r["p90_us"] = r["median_us"].get<double>() * 1.005;
  }
  json cur = base;
  test::scale_all_results(cur, 1.03);
  const GateResult r = gate(base, cur);
  EXPECT_EQ(r.outcome(), GateOutcome::Passed);
  EXPECT_EQ(r.count(Verdict::Regressed), 0);
  GateOptions strict;
  strict.threshold_pct = 2;
  EXPECT_EQ(gate(base, cur, strict).count(Verdict::Regressed), kCases);
}

TEST(Gate, OneCaseFiftyPercentSlowerRegressesExactlyThatCase) {
  const json base = test::sweep_document(kCases);
  json cur = base;
  test::scale_result(cur, 5, 1.5);
  const GateResult r = gate(base, cur);
  EXPECT_EQ(keys_with(r, Verdict::Regressed), std::vector<std::string>{test::result_key(base, 5)});
  EXPECT_EQ(r.cases.front().key, test::result_key(base, 5));  // regressions come first
  EXPECT_DOUBLE_EQ(r.cases.front().ratio, 1.5);
}

TEST(Gate, NoisyCaseSlowerWithinItsNoiseDoesNotRegress) {
  // 12% slower, past the 5% threshold, but the runs' p10-p90 ranges overlap.
  const CaseComparison c = compare_case(timing(100, 80, 130), timing(112, 95, 140), 5.0);
  EXPECT_EQ(c.verdict, Verdict::Unchanged);
  EXPECT_TRUE(c.within_noise);
}

TEST(Gate, NoisyCaseSlowerBeyondItsNoiseStillRegresses) {
  const CaseComparison c = compare_case(timing(100, 80, 130), timing(160, 135, 190), 5.0);
  EXPECT_EQ(c.verdict, Verdict::Regressed);
}

TEST(Gate, TightCaseJustPastTheThresholdRegresses) {
  const CaseComparison c = compare_case(timing(100, 99.5, 100.5), timing(105.6, 105, 106), 5.0);
  EXPECT_EQ(c.verdict, Verdict::Regressed);
}

TEST(Gate, NoisyCasesInAWholeRunDoNotFail) {
  json base = test::sweep_document(kCases);
  for (json& r : base["results"]) {  // wide spread: p10 = 0.7·median, p90 = 1.4·median
    r["p10_us"] = r["median_us"].get<double>() * 0.7;
    r["p90_us"] = r["median_us"].get<double>() * 1.4;
  }
  json cur = base;
  test::scale_all_results(cur, 1.2);
  const GateResult r = gate(base, cur);
  EXPECT_EQ(r.outcome(), GateOutcome::Passed);
  for (const CaseComparison& c : r.cases) EXPECT_TRUE(c.within_noise) << c.key;
}

TEST(Gate, FasterBeyondThresholdAndNoiseIsAnImprovementListedAfterRegressions) {
  const json base = test::sweep_document(kCases);
  json cur = base;
  test::scale_result(cur, 2, 0.5);
  test::scale_result(cur, 7, 1.3);
  const GateResult r = gate(base, cur);
  EXPECT_EQ(keys_with(r, Verdict::Improved), std::vector<std::string>{test::result_key(base, 2)});
  ASSERT_GE(r.cases.size(), 2u);
  EXPECT_EQ(r.cases[0].verdict, Verdict::Regressed);
  EXPECT_EQ(r.cases[1].verdict, Verdict::Improved);
}

TEST(Gate, DifferentDeviceKeysAreRefused) {
  const json base = test::sweep_document(kCases);
  const json other = test::sweep_document(kCases, "ci", "NVIDIA Other GPU");
  EXPECT_THROW(gate(base, other), InputError);
}

TEST(Gate, CaseAbsentFromARunOfTheSameProfileIsMissingUnlessAllowed) {
  const json base = test::sweep_document(kCases);
  json cur = base;
  cur["results"].erase(3);
  GateResult r = gate(base, cur);
  ASSERT_EQ(r.missing.size(), 1u);
  EXPECT_EQ(r.missing[0].key, test::result_key(base, 3));
  EXPECT_EQ(r.outcome(), GateOutcome::InputsDiffer);
  EXPECT_EQ(r.exit_code(), 2);
  GateOptions allow;
  allow.allow_missing = 1;
  EXPECT_EQ(gate(base, cur, allow).outcome(), GateOutcome::Passed);
}

TEST(Gate, CaseNewInTheCurrentRunIsMissingItsBaseline) {
  json base = test::sweep_document(kCases);
  const json cur = base;
  base["results"].erase(0);
  const GateResult r = gate(base, cur);
  ASSERT_EQ(r.missing.size(), 1u);
  EXPECT_EQ(r.missing[0].why, "not in the baseline");
}

TEST(Gate, CaseThatStoppedWorkingIsMissingNotSilentlySkipped) {
  const json base = test::sweep_document(kCases);
  json cur = base;
  cur["results"][4]["status"] = "verify_failed";
  const GateResult r = gate(base, cur);
  ASSERT_EQ(r.missing.size(), 1u);
  EXPECT_NE(r.missing[0].why.find("verify_failed"), std::string::npos);
}

TEST(Gate, SmallerProfileAgainstABiggerBaselineComparesTheSubset) {
  const json base = test::sweep_document(kCases, "default");
  json cur = test::sweep_document(kCases, "ci");
  cur["results"].erase(cur["results"].begin() + 6, cur["results"].end());
  const GateResult r = gate(base, cur);
  EXPECT_EQ(r.outcome(), GateOutcome::Passed);
  EXPECT_EQ(r.cases.size(), 6u);
  EXPECT_EQ(r.not_in_profile, kCases - 6);
}

TEST(Gate, MismatchedInputsOutrankARegression) {
  const json base = test::sweep_document(kCases);
  json cur = base;
  test::scale_result(cur, 1, 2.0);
  cur["results"].erase(8);
  EXPECT_EQ(gate(base, cur).outcome(), GateOutcome::InputsDiffer);
}

TEST(SweepResults, ReadsTheSweepFormatAndRefusesBadDocuments) {
  const json doc = test::sweep_document(4);
  const SweepResults s = sweep_results_from_json(doc, "s.json");
  EXPECT_EQ(s.cases.size(), 4u);
  EXPECT_EQ(s.profile, "ci");
  EXPECT_EQ(s.cases[1].median_us, doc["results"][1]["median_us"].get<double>());

  const auto refused = [&](const std::function<void(json&)>& mutate, const std::string& message) {
    json bad = doc;
    mutate(bad);
    try {
      sweep_results_from_json(bad, "s.json");
      ADD_FAILURE() << "accepted: " << message;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  refused([](json& d) { d["schema"] = "gemmtune.cache"; }, "schema: 'gemmtune.cache'");
  refused([](json& d) { d["schema_version"] = 7; }, "schema_version: 7");
  refused([](json& d) { d["device"].erase("key"); }, "device.key: missing");
  refused([](json& d) { d["results"][2]["median_us"] = -1; }, "results[2].median_us");
  refused([](json& d) { d["results"][1]["p10_us"] = 1e9; }, "results[1].p10_us");
  refused([](json& d) { d["results"].push_back(d["results"][0]); }, "results[4].key");
}

}  // namespace
}  // namespace gemmtune

namespace gemmtune {
namespace {

CaseTiming clocked(double median, double clock_mhz) {
  CaseTiming t{"case", "ok", median, median * 0.995, median * 1.005, 30};
  t.sm_clock_mhz = clock_mhz;
  return t;
}

// Seen on the H100: a later sweep of 4096³ tf32 ran 14% slower at 1545 MHz instead of 1755 (power limit).
TEST(Gate, SlowdownThatTheLowerSmClockExplainsIsThrottledNotRegressed) {
  const CaseComparison c = compare_case(clocked(356.6, 1755), clocked(407.0, 1545), 5.0);
  EXPECT_EQ(c.verdict, Verdict::Unchanged);
  EXPECT_TRUE(c.throttled);
  EXPECT_EQ(verdict_label(c), "throttled");
}

TEST(Gate, SlowdownAtTheSameSmClockRegresses) {
  const CaseComparison c = compare_case(clocked(356.6, 1755), clocked(407.0, 1755), 5.0);
  EXPECT_EQ(c.verdict, Verdict::Regressed);
  EXPECT_FALSE(c.throttled);
}

TEST(Gate, SlowdownLargerThanTheClockDropStillRegresses) {
  // 30% slower with a 10% lower clock: 17% more cycles.
  const CaseComparison c = compare_case(clocked(100.0, 1980), clocked(130.0, 1782), 5.0);
  EXPECT_EQ(c.verdict, Verdict::Regressed);
}

TEST(Gate, RecordsWithoutClocksAreJudgedOnTimeAlone) {
  const CaseComparison c = compare_case(clocked(100.0, 0), clocked(120.0, 1500), 5.0);
  EXPECT_EQ(c.verdict, Verdict::Regressed);
}

}  // namespace
}  // namespace gemmtune
