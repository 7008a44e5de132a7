#include "gate/gate.hpp"
#include "gate/report.hpp"

#include <cstdio>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "problem/gemm_problem.hpp"
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

TEST(Gate, CandidateNewInTheCurrentRunIsListedAsNewAndDoesNotFail) {
  json base = test::sweep_document(kCases);
  const json cur = base;
  base["results"].erase(0);  // its problem keeps its other candidate
  const GateResult r = gate(base, cur);
  EXPECT_TRUE(r.missing.empty());
  ASSERT_EQ(r.new_cases.size(), 1u);
  EXPECT_EQ(r.new_cases[0].key, test::result_key(cur, 0));
  EXPECT_EQ(r.new_cases[0].why, "new candidate");
  EXPECT_TRUE(r.new_problems.empty());
  EXPECT_EQ(r.outcome(), GateOutcome::Passed);
  EXPECT_EQ(r.exit_code(), 0);
}

TEST(Gate, ProblemNewInTheCurrentRunIsListedAsNewWithItsCandidates) {
  json base = test::sweep_document(kCases);
  const json cur = base;
  base["results"].erase(0);  // both candidates of the first problem
  base["results"].erase(0);
  const GateResult r = gate(base, cur);
  EXPECT_EQ(r.outcome(), GateOutcome::Passed);
  ASSERT_EQ(r.new_cases.size(), 2u);
  EXPECT_EQ(r.new_cases[0].why, "new problem");
  ASSERT_EQ(r.new_problems.size(), 1u);
  EXPECT_EQ(r.new_problems[0], cur["results"][0]["problem_key"].get<std::string>());
}

TEST(Gate, NewCasesNeverCountAgainstAllowMissingButAbsentBaselineCasesDo) {
  json base = test::sweep_document(kCases);
  json cur = test::sweep_document(kCases + 6);  // six new cases (three new problems)
  GateResult r = gate(base, cur);
  EXPECT_EQ(r.new_cases.size(), 6u);
  EXPECT_EQ(r.exit_code(), 0);
  cur["results"].erase(2);  // a baseline case the same profile's run should have measured
  r = gate(base, cur);
  EXPECT_EQ(r.new_cases.size(), 6u);
  ASSERT_EQ(r.missing.size(), 1u);
  EXPECT_EQ(r.missing[0].key, test::result_key(base, 2));
  EXPECT_EQ(r.exit_code(), 2);
}

TEST(Gate, CaseThatFailedInTheBaselineAndWorksNowIsNew) {
  json base = test::sweep_document(kCases);
  const json cur = base;
  base["results"][4]["status"] = "verify_failed";
  const GateResult r = gate(base, cur);
  EXPECT_EQ(r.exit_code(), 0);
  ASSERT_EQ(r.new_cases.size(), 1u);
  EXPECT_EQ(r.new_cases[0].why, "no baseline timing (verify_failed there)");
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
  refused([](json& d) { d["device"]["key"] = "lt/a-1"; }, "device.key: device key 'lt/a-1'");
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

// Per-problem verdicts and the run-to-run threshold, on hand-made runs.
namespace gemmtune {
namespace {

const std::string kProblem = "fwd:1024x1024x1024:nn:row:none:tf32";
const std::string kOwnA = "own/tf32_128x128x32_w64x64_s3";
const std::string kOwnB = "own/tf32_64x64x32_w32x32_s4";
const std::string kLt = "lt/a21-t18-s8-k1-r0-w0-c0-cl0-i0";

// An ok case; `spread` is (p90 - p10) / median, centred on the median.
CaseTiming timed(const std::string& candidate, double median, double spread = 0.01, int heuristic_rank = -1) {
  CaseTiming t;
  t.key = kProblem + "/" + candidate;
  t.status = "ok";
  t.median_us = median;
  t.p10_us = median * (1 - spread / 2);
  t.p90_us = median * (1 + spread / 2);
  t.samples = 60;
  t.problem_key = kProblem;
  t.candidate = Candidate::parse_id(candidate);
  t.candidate.heuristic_rank = heuristic_rank;
  return t;
}

SweepResults run_of(std::vector<CaseTiming> cases) {
  SweepResults s;
  s.source = "run.json";
  s.device_key = "NVIDIA Test GPU|sm_90|132sm|drv1|lt1";
  s.profile = "ci";
  s.cases = std::move(cases);
  return s;
}

TEST(GatePerProblem, FastestCandidateSlowerWithinItsNoiseStillRegressesTheProblem) {
  // A got 10% slower but its current samples are so spread that the case is within noise; the problem's best is now
  // B at 106, 6% slower than A was, outside both ranges: a program using the cache gets slower.
  const SweepResults base = run_of({timed(kOwnA, 100, 0.02), timed(kOwnB, 103, 0.02)});
  const SweepResults cur = run_of({timed(kOwnA, 110, 0.4), timed(kOwnB, 106, 0.02)});
  const GateResult r = compare_sweeps(base, cur, {});
  EXPECT_EQ(r.count(Verdict::Regressed), 0);
  ASSERT_EQ(r.problems.size(), 1u);
  const ProblemComparison& p = r.problems[0];
  EXPECT_EQ(p.verdict(), Verdict::Regressed);
  EXPECT_EQ(p.best.baseline.key, kProblem + "/" + kOwnA);
  EXPECT_EQ(p.best.current.key, kProblem + "/" + kOwnB);
  EXPECT_DOUBLE_EQ(p.best.ratio, 1.06);
  EXPECT_EQ(r.outcome(), GateOutcome::Regressed);
  EXPECT_EQ(r.exit_code(), 1);
}

TEST(GatePerProblem, SlowerCandidateThatIsNotTheBestLeavesTheProblemUnchanged) {
  const SweepResults base = run_of({timed(kOwnA, 100), timed(kOwnB, 150)});
  const SweepResults cur = run_of({timed(kOwnA, 100), timed(kOwnB, 200)});
  const GateResult r = compare_sweeps(base, cur, {});
  EXPECT_EQ(r.count(Verdict::Regressed), 1);  // the case still fails the gate
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].verdict(), Verdict::Unchanged);
  EXPECT_EQ(r.count_problems(Verdict::Regressed), 0);
}

TEST(GatePerProblem, ChosenCandidateFollowsTheCachesRuleNotJustTheFastest) {
  // cuBLASLt's first choice within 1% of the fastest is what the cache keeps (problem/candidate_choice.hpp).
  const SweepResults base = run_of({timed(kOwnA, 100), timed(kLt, 100.5, 0.01, 0)});
  const SweepResults cur = run_of({timed(kOwnA, 100), timed(kLt, 120, 0.01, 0)});
  const GateResult r = compare_sweeps(base, cur, {});
  ASSERT_EQ(r.problems.size(), 1u);
  const ProblemComparison& p = r.problems[0];
  EXPECT_EQ(p.best.baseline.key, kProblem + "/" + kOwnA);
  EXPECT_EQ(p.chosen.baseline.key, kProblem + "/" + kLt);  // the heuristic's pick, within the tie band
  EXPECT_EQ(p.chosen.current.key, kProblem + "/" + kOwnA);  // now 20% slower: the cache would switch
  EXPECT_EQ(p.verdict(), Verdict::Unchanged);               // and the program is no slower
  EXPECT_EQ(r.count(Verdict::Regressed), 1);                // while the cuBLASLt case itself regressed
}

TEST(GatePerProblem, ChosenCandidateThatGotSlowerRegressesTheProblem) {
  const SweepResults base = run_of({timed(kOwnA, 93), timed(kLt, 93.5, 0.01, 0)});
  const SweepResults same = run_of({timed(kOwnA, 93), timed(kLt, 93.8, 0.01, 0)});
  EXPECT_EQ(compare_sweeps(base, same, {}).outcome(), GateOutcome::Passed);
  const SweepResults slower = run_of({timed(kOwnA, 100), timed(kLt, 100.5, 0.01, 0)});
  const GateResult r = compare_sweeps(base, slower, {});
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].chosen.verdict, Verdict::Regressed);
  EXPECT_EQ(r.problems[0].chosen.baseline.key, kProblem + "/" + kLt);
  EXPECT_EQ(r.problems[0].chosen.current.key, kProblem + "/" + kLt);
  EXPECT_EQ(r.problems[0].best.verdict, Verdict::Regressed);
  EXPECT_EQ(r.count_problems(Verdict::Regressed), 1);
}

TEST(GatePerProblem, OffWithNoPerProblemAndThenOnlyCasesDecide) {
  const SweepResults base = run_of({timed(kOwnA, 100, 0.02), timed(kOwnB, 103, 0.02)});
  const SweepResults cur = run_of({timed(kOwnA, 110, 0.4), timed(kOwnB, 106, 0.02)});
  GateOptions cases_only;
  cases_only.per_problem = false;
  const GateResult r = compare_sweeps(base, cur, cases_only);
  EXPECT_TRUE(r.problems.empty());
  EXPECT_EQ(r.outcome(), GateOutcome::Passed);
}

TEST(GateRunToRun, CaseSlowerThanTheThresholdButWithinItsRecordedSpreadPasses) {
  CaseTiming base = timed(kOwnA, 100);
  base.run_to_run_pct = 10;  // the baseline's own runs of this case differed by 10%
  const CaseComparison c = compare_case(base, timed(kOwnA, 108), 5.0);
  EXPECT_EQ(c.verdict, Verdict::Unchanged);
  EXPECT_DOUBLE_EQ(c.threshold_pct, 10);
  EXPECT_TRUE(c.within_run_to_run);  // it needed the spread: at 5% it would have regressed
  EXPECT_EQ(verdict_label(c), "run-to-run");
}

TEST(GateRunToRun, CaseSlowerThanItsRecordedSpreadRegresses) {
  CaseTiming base = timed(kOwnA, 100);
  base.run_to_run_pct = 6;
  const CaseComparison c = compare_case(base, timed(kOwnA, 108), 5.0);
  EXPECT_EQ(c.verdict, Verdict::Regressed);
  EXPECT_DOUBLE_EQ(c.threshold_pct, 6);
  EXPECT_FALSE(c.within_run_to_run);
}

TEST(GateRunToRun, SpreadBelowTheThresholdChangesNothing) {
  CaseTiming base = timed(kOwnA, 100);
  base.run_to_run_pct = 2;
  const CaseComparison c = compare_case(base, timed(kOwnA, 104), 5.0);
  EXPECT_DOUBLE_EQ(c.threshold_pct, 5);
  EXPECT_FALSE(c.within_run_to_run);
  EXPECT_EQ(compare_case(base, timed(kOwnA, 106), 5.0).verdict, Verdict::Regressed);
}

TEST(GateRunToRun, SpreadAlsoWidensImprovementsAndIsCountedWhenItSparedAFailure) {
  CaseTiming base = timed(kOwnA, 100);
  base.run_to_run_pct = 12;
  EXPECT_EQ(compare_case(base, timed(kOwnA, 92), 5.0).verdict, Verdict::Unchanged);  // -8% is inside 12%
  const GateResult r = compare_sweeps(run_of({base}), run_of({timed(kOwnA, 108)}), {});
  EXPECT_EQ(r.outcome(), GateOutcome::Passed);
  EXPECT_EQ(r.count_within_run_to_run(), 3);  // the case, and the problem's best and chosen (the same case)
}

TEST(GateRunToRun, SweepReaderTakesTheSpreadOfACombinedBaselineAndRefusesANegativeOne) {
  json doc = test::sweep_document(2);
  doc["results"][1]["run_to_run"] = {{"runs", 3}, {"spread_pct", 7.5}};
  const SweepResults s = sweep_results_from_json(doc, "b.json");
  EXPECT_EQ(s.cases[0].run_to_run_pct, 0);
  EXPECT_EQ(s.cases[1].run_to_run_pct, 7.5);
  doc["results"][1]["run_to_run"]["spread_pct"] = -1;
  EXPECT_THROW(sweep_results_from_json(doc, "b.json"), InputError);
}

TEST(SweepResults, SplitsTheKeyIntoProblemAndCandidateAndKeepsTheHeuristicRank) {
  const json doc = test::sweep_document(2);
  const SweepResults s = sweep_results_from_json(doc, "s.json");
  EXPECT_EQ(s.cases[0].problem_key, doc["results"][0]["problem_key"].get<std::string>());
  EXPECT_EQ(s.cases[0].candidate.id(), doc["results"][0]["candidate"]["id"].get<std::string>());
  EXPECT_EQ(s.cases[0].candidate.heuristic_rank, doc["results"][0]["candidate"]["heuristic_rank"].get<int>());
  json bad = doc;
  bad["results"][1]["key"] = "no-candidate-here";
  EXPECT_THROW(sweep_results_from_json(bad, "s.json"), InputError);
}

}  // namespace
}  // namespace gemmtune

// Rule 4 (gate.hpp): a case slower beyond noise must be more than one run's luck to fail.
namespace gemmtune {
namespace {

const std::string kNone = "fwd:%dx%dx%d:nn:row:none:tf32";
const std::string kFamilyVariant = "own/wgmma_tf32_64x64x32_s4";
const std::string kBestVariant = "own/wgmma_tf32_128x128x32_s4";
const std::string kHeuristic = "lt/a43-t18-s34-k-1-r2-w0-c0-cl3-i0";

std::string problem_at(int size) {
  char key[64];
  std::snprintf(key, sizeof(key), kNone.c_str(), size, size, size);
  return key;
}

// A case of a tf32 problem of size³ (p10-p90 ±0.5% around the median).
CaseTiming shape_case(int size, const std::string& candidate, double median, int heuristic_rank = -1) {
  CaseTiming t;
  t.problem_key = problem_at(size);
  t.problem_kind = GemmProblem::parse_key(t.problem_key).kind_key();
  t.key = t.problem_key + "/" + candidate;
  t.status = "ok";
  t.median_us = median;
  t.p10_us = median * 0.995;
  t.p90_us = median * 1.005;
  t.samples = 60;
  t.candidate = Candidate::parse_id(candidate);
  t.candidate.heuristic_rank = heuristic_rank;
  return t;
}

// Five shapes; on each, cuBLASLt's heuristic-first is the fastest (what the cache keeps), a fast own variant is next
// and kFamilyVariant is slowest. `slower` multiplies kFamilyVariant's times at the shapes it names.
SweepResults five_shapes(const std::map<int, double>& slower = {}, double best_factor = 1.0) {
  std::vector<CaseTiming> cases;
  for (int size : {256, 512, 1024, 2048, 4096}) {
    const double base = size / 64.0;
    const auto it = slower.find(size);
    cases.push_back(shape_case(size, kHeuristic, base, 0));
    cases.push_back(shape_case(size, kBestVariant, base * 1.2 * (size == 1024 ? best_factor : 1.0)));
    cases.push_back(shape_case(size, kFamilyVariant, base * 1.5 * (it == slower.end() ? 1.0 : it->second)));
  }
  return run_of(std::move(cases));
}

const CaseComparison& case_of(const GateResult& r, int size, const std::string& candidate) {
  const std::string key = problem_at(size) + "/" + candidate;
  for (const CaseComparison& c : r.cases)
    if (c.key == key) return c;
  throw std::runtime_error("no case " + key);
}

// Measured on the H200 (issue 37): two ci sweeps back to back, gated against each other, failed on this case alone:
// +5.7% outside both runs' p10-p90, a candidate no problem chose, every per-problem verdict unchanged.
TEST(GateLoneCase, ACandidateNoProblemPicksSlowerAtOneShapeIsIsolatedNotFailed) {
  const GateResult r = compare_sweeps(five_shapes(), five_shapes({{1024, 1.057}}), {});
  const CaseComparison& c = case_of(r, 1024, kFamilyVariant);
  EXPECT_EQ(c.verdict, Verdict::Unchanged);
  EXPECT_TRUE(c.isolated);
  EXPECT_FALSE(c.picked);
  EXPECT_EQ(c.family, kFamilyVariant + " on fwd:nn:row:none:tf32");
  EXPECT_EQ(c.family_cases, 5);
  EXPECT_EQ(c.family_slower, 1);
  EXPECT_EQ(verdict_label(c), "isolated");
  EXPECT_EQ(r.count_isolated(), 1);
  EXPECT_EQ(r.outcome(), GateOutcome::Passed);
  EXPECT_NE(spared_text(r).find("1 case(s) slower beyond --threshold 5% and the noise, but alone"), std::string::npos)
      << spared_text(r);
}

TEST(GateLoneCase, TheSameCaseFailsWhenItsGuardIsTurnedDown) {
  GateOptions strict;
  strict.lone_threshold_pct = 5;  // the rule before issue 37: every case on its own evidence
  const GateResult r = compare_sweeps(five_shapes(), five_shapes({{1024, 1.057}}), strict);
  EXPECT_EQ(case_of(r, 1024, kFamilyVariant).verdict, Verdict::Regressed);
  EXPECT_EQ(r.outcome(), GateOutcome::Regressed);
}

TEST(GateLoneCase, ALoneCaseSlowerThanTheLoneThresholdStillFails) {
  const GateResult r = compare_sweeps(five_shapes(), five_shapes({{1024, 1.30}}), {});
  const CaseComparison& c = case_of(r, 1024, kFamilyVariant);
  EXPECT_EQ(c.verdict, Verdict::Regressed);
  EXPECT_FALSE(c.isolated);
  EXPECT_EQ(r.outcome(), GateOutcome::Regressed);
}

TEST(GateLoneCase, AVariantSlowerAtMostShapesRegressesAtEveryShapeItIsSlower) {
  const GateResult r = compare_sweeps(five_shapes(), five_shapes({{256, 1.10}, {1024, 1.10}, {4096, 1.10}}), {});
  for (int size : {256, 1024, 4096}) {
    const CaseComparison& c = case_of(r, size, kFamilyVariant);
    EXPECT_EQ(c.verdict, Verdict::Regressed) << size;
    EXPECT_EQ(c.family_slower, 3);
  }
  EXPECT_EQ(case_of(r, 512, kFamilyVariant).verdict, Verdict::Unchanged);
  EXPECT_EQ(r.count(Verdict::Regressed), 3);
  EXPECT_EQ(r.count_problems(Verdict::Regressed), 0);  // no program is slower, but the kernel is
  EXPECT_EQ(r.outcome(), GateOutcome::Regressed);
}

TEST(GateLoneCase, HalfAFamilySlowerIsNotAMajority) {
  std::vector<CaseTiming> base, cur;
  for (int size : {512, 1024}) {  // a family of two: both must be slower
    base.push_back(shape_case(size, kFamilyVariant, 10));
    cur.push_back(shape_case(size, kFamilyVariant, size == 1024 ? 10.8 : 10));
    base.push_back(shape_case(size, kHeuristic, 5, 0));
    cur.push_back(shape_case(size, kHeuristic, 5, 0));
  }
  const GateResult r = compare_sweeps(run_of(base), run_of(cur), {});
  EXPECT_TRUE(case_of(r, 1024, kFamilyVariant).isolated);
  EXPECT_EQ(r.outcome(), GateOutcome::Passed);
}

TEST(GateLoneCase, AFamilyOfOneCannotVouchForItself) {
  std::vector<CaseTiming> base = {shape_case(1024, kFamilyVariant, 10), shape_case(1024, kHeuristic, 5, 0)};
  std::vector<CaseTiming> cur = {shape_case(1024, kFamilyVariant, 10.8), shape_case(1024, kHeuristic, 5, 0)};
  const GateResult r = compare_sweeps(run_of(base), run_of(cur), {});
  const CaseComparison& c = case_of(r, 1024, kFamilyVariant);
  EXPECT_EQ(c.family_cases, 1);
  EXPECT_TRUE(c.isolated);
}

TEST(GateLoneCase, TheCandidateAProgramGetsFailsAloneAndSoDoesItsProblem) {
  // Heuristic-first 8% slower at one shape: it is what the cache keeps there.
  SweepResults cur = five_shapes();
  for (CaseTiming& c : cur.cases)
    if (c.key == problem_at(2048) + "/" + kHeuristic) {
      c.median_us *= 1.08;
      c.p10_us *= 1.08;
      c.p90_us *= 1.08;
    }
  const GateResult r = compare_sweeps(five_shapes(), cur, {});
  const CaseComparison& c = case_of(r, 2048, kHeuristic);
  EXPECT_TRUE(c.picked);
  EXPECT_EQ(c.verdict, Verdict::Regressed);
  EXPECT_EQ(r.count_problems(Verdict::Regressed), 1);
}

TEST(GateLoneCase, ACandidatePickedOnlyInTheBaselineCountsAsPicked) {
  // At 1024 the own variant was the fastest in the baseline (heuristic-first 4% slower, outside the tie band) and is
  // 8% slower now; the current run's fastest is heuristic-first, so the program is 4% slower: within the threshold.
  const GateResult r = compare_sweeps(five_shapes({}, 0.8), five_shapes({}, 0.8 * 1.08), {});
  const CaseComparison& c = case_of(r, 1024, kBestVariant);
  EXPECT_TRUE(c.picked);
  EXPECT_EQ(c.verdict, Verdict::Regressed);
}

TEST(GateLoneCase, EveryOwnCaseTenPercentSlowerFailsTheWholeBackend) {
  SweepResults cur = five_shapes();
  for (CaseTiming& c : cur.cases)
    if (c.candidate.backend == Backend::Own) {
      c.median_us *= 1.10;
      c.p10_us *= 1.10;
      c.p90_us *= 1.10;
    }
  const GateResult r = compare_sweeps(five_shapes(), cur, {});
  EXPECT_EQ(r.count(Verdict::Regressed), 10);
  EXPECT_EQ(r.count_isolated(), 0);
  EXPECT_EQ(r.outcome(), GateOutcome::Regressed);
}

TEST(GateLoneCase, ReportsSayWhatEachCaseWasHeldTo) {
  const GateResult r = compare_sweeps(five_shapes(), five_shapes({{1024, 1.057}}), {});
  const json j = gate_json(r);
  EXPECT_EQ(j["isolated"], 1);
  EXPECT_EQ(j["lone_threshold_pct"], 25.0);
  bool found = false;
  for (const json& c : j["cases"])
    if (c["isolated"] == true) {
      found = true;
      EXPECT_EQ(c["picked"], false);
      EXPECT_EQ(c["family"]["cases"], 5);
      EXPECT_EQ(c["family"]["slower"], 1);
    }
  EXPECT_TRUE(found);
  EXPECT_NE(gate_markdown(r).find("| isolated | `" + problem_at(1024) + "/" + kFamilyVariant), std::string::npos)
      << gate_markdown(r);
  EXPECT_NE(gate_rule_text({}).find("or it is over 25% slower"), std::string::npos);
}

}  // namespace
}  // namespace gemmtune
