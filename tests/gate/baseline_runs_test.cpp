#include "gate/baseline_runs.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "gate/gate.hpp"
#include "support/sweep_fixture.hpp"

namespace gemmtune {
namespace {

using nlohmann::json;

constexpr int kCases = 8;

CombinedBaseline combine(const std::vector<json>& docs, const std::map<std::string, std::string>& notes = {}) {
  std::vector<BaselineRun> runs;
  for (std::size_t i = 0; i < docs.size(); ++i) runs.push_back({docs[i], "run" + std::to_string(i + 1) + ".json"});
  return combine_baseline_runs(runs, notes);
}

// Run 2 is run 1 with case 3 8% slower and every other case 1% faster.
std::vector<json> two_runs() {
  const json first = test::sweep_document(kCases);
  json second = first;
  test::scale_all_results(second, 0.99);
  test::scale_result(second, 3, 1.08 / 0.99);
  return {first, second};
}

TEST(BaselineRuns, EachCaseKeepsItsLowerMiddleRunAndTheRunToRunSpread) {
  const std::vector<json> runs = two_runs();
  const CombinedBaseline b = combine(runs);
  EXPECT_EQ(b.cases, kCases);
  EXPECT_EQ(b.dropped, 0);
  const json& case3 = b.document["results"][3];
  EXPECT_EQ(case3["median_us"], runs[0]["results"][3]["median_us"]);  // the faster of two runs
  EXPECT_EQ(case3["run_to_run"]["runs"], 2);
  EXPECT_EQ(case3["run_to_run"]["reference_run"], 1);
  EXPECT_NEAR(case3["run_to_run"]["spread_pct"].get<double>(), 8.0, 0.01);
  const json& case0 = b.document["results"][0];
  EXPECT_EQ(case0["median_us"], runs[1]["results"][0]["median_us"]);
  EXPECT_EQ(case0["p90_us"], runs[1]["results"][0]["p90_us"]);  // one real run's quantiles, not a blend
  EXPECT_DOUBLE_EQ(case0["run_to_run"]["spread_pct"].get<double>(), 1.02);  // 1.0101...% rounded up
  EXPECT_NEAR(b.max_spread_pct, 8.0, 0.01);
}

TEST(BaselineRuns, ThreeRunsKeepTheMiddleOne) {
  const json first = test::sweep_document(kCases);
  json slow = first, fast = first;
  test::scale_all_results(slow, 1.04);
  test::scale_all_results(fast, 0.98);
  const CombinedBaseline b = combine({slow, first, fast});
  EXPECT_EQ(b.document["results"][5]["median_us"], first["results"][5]["median_us"]);
  EXPECT_EQ(b.document["results"][5]["run_to_run"]["reference_run"], 2);
  EXPECT_NEAR(b.document["results"][5]["run_to_run"]["spread_pct"].get<double>(), 100 * (1.04 / 0.98 - 1), 0.01);
}

TEST(BaselineRuns, CombinedBaselineIsASweepDocumentTheGateReadsWithItsSpread) {
  const CombinedBaseline b = combine(two_runs());
  const SweepResults base = sweep_results_from_json(b.document, "baseline.json");
  ASSERT_EQ(base.cases.size(), static_cast<std::size_t>(kCases));
  EXPECT_NEAR(base.cases[3].run_to_run_pct, 8.0, 0.01);

  // Case 3 is no problem's pick and alone in moving, which the gate forgives below --lone-threshold whatever the
  // baseline; held to --threshold alone, only the recorded spread can spare it.
  GateOptions on_its_own;
  on_its_own.lone_threshold_pct = on_its_own.threshold_pct;
  // A current run like the slower recorded run passes: case 3 moved 8% between the baseline's own runs.
  json like_run2 = test::sweep_document(kCases);
  test::scale_result(like_run2, 3, 1.07);
  GateResult r = compare_sweeps(base, sweep_results_from_json(like_run2, "cur.json"), on_its_own);
  EXPECT_EQ(r.outcome(), GateOutcome::Passed);
  EXPECT_GE(r.count_within_run_to_run(), 1);
  // Against the first run alone, a plain sweep baseline, the same current run fails.
  r = compare_sweeps(sweep_results_from_json(test::sweep_document(kCases), "run1.json"),
                     sweep_results_from_json(like_run2, "cur.json"), on_its_own);
  EXPECT_EQ(r.outcome(), GateOutcome::Regressed);
  // Beyond the recorded spread it fails too.
  json slower = test::sweep_document(kCases);
  test::scale_result(slower, 3, 1.15);
  EXPECT_EQ(compare_sweeps(base, sweep_results_from_json(slower, "cur.json"), on_its_own).outcome(),
            GateOutcome::Regressed);
}

// Seen on the H100's two back-to-back kernels sweeps: a case 8.6% apart failed against a baseline holding both runs,
// because reference × (1 + spread/100) rounded just below the slower run's median.
TEST(BaselineRuns, EveryRunOfTheBaselinePassesAgainstIt) {
  const json first = test::sweep_document(kCases);
  json second = first;
  const double factors[kCases] = {1.0861234567, 0.9431, 1.0567891, 1.31, 0.7777, 1.0000001, 1.1234567, 0.99};
  for (std::size_t i = 0; i < kCases; ++i) test::scale_result(second, i, factors[i]);
  const SweepResults base = sweep_results_from_json(combine({first, second}).document, "baseline.json");
  for (const json& run : {first, second}) {
    const GateResult r = compare_sweeps(base, sweep_results_from_json(run, "run.json"), {});
    EXPECT_EQ(r.outcome(), GateOutcome::Passed);
    EXPECT_EQ(r.count(Verdict::Improved), 0);
  }
}

TEST(BaselineRuns, CasesNotInEveryRunOrOfDifferentStatusesAreDroppedAndListed) {
  std::vector<json> runs = two_runs();
  runs[1]["results"].erase(6);
  runs[1]["results"][2]["status"] = "error";
  json extra = test::sweep_document(kCases + 2);
  runs[1]["results"].push_back(extra["results"][kCases]);
  const CombinedBaseline b = combine(runs);
  EXPECT_EQ(b.dropped, 3);
  EXPECT_EQ(b.cases, kCases - 2);
  const json& dropped = b.document["baseline"]["dropped"];
  ASSERT_EQ(dropped.size(), 3u);
  EXPECT_EQ(dropped[0]["key"], test::result_key(runs[0], 2));
  EXPECT_EQ(dropped[0]["why"], "ok in run 1, error in run 2");
  EXPECT_EQ(dropped[1]["key"], test::result_key(runs[0], 6));
  EXPECT_EQ(dropped[1]["why"], "not in run 2 (run2.json)");
  EXPECT_EQ(dropped[2]["key"], extra["results"][kCases]["key"]);
}

TEST(BaselineRuns, RecordsWhereAndWithWhatItWasRecorded) {
  const CombinedBaseline b = combine(two_runs(), {{"git_commit", "abc123"}, {"build", "Release sm_90"}});
  const json& meta = b.document["baseline"];
  EXPECT_EQ(meta["schema"], kBaselineSchemaName);
  EXPECT_EQ(meta["runs"].size(), 2u);
  EXPECT_EQ(meta["runs"][1]["source"], "run2.json");
  const json& recorded = meta["recorded"];
  EXPECT_EQ(recorded["device"], "NVIDIA Test GPU");
  EXPECT_EQ(recorded["driver"], "580.159.04");
  EXPECT_EQ(recorded["cublaslt_version"], 130100);
  EXPECT_EQ(recorded["gemmtune_version"], "0.1.0-test");
  EXPECT_EQ(recorded["profile"], "ci");
  EXPECT_EQ(recorded["git_commit"], "abc123");
  EXPECT_EQ(recorded["build"], "Release sm_90");
}

TEST(BaselineRuns, RefusesRunsThatCannotMakeOneBaseline) {
  const std::vector<json> runs = two_runs();
  const auto refused = [](const std::vector<json>& docs, const std::string& message) {
    try {
      combine(docs);
      ADD_FAILURE() << "accepted: " << message;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  refused({runs[0]}, "at least two sweeps");
  refused({runs[0], test::sweep_document(kCases, "ci", "NVIDIA Other GPU")}, "device key");
  refused({runs[0], test::sweep_document(kCases, "default")}, "profile");
  json other_version = runs[1];
  other_version["gemmtune_version"] = "9.9.9";
  refused({runs[0], other_version}, "gemmtune version");
  refused({combine(runs).document, runs[1]}, "already a combined baseline");
  json broken = runs[1];
  broken["results"][0]["median_us"] = -1;
  refused({runs[0], broken}, "run2.json: results[0].median_us");
}

}  // namespace
}  // namespace gemmtune
