// The cost model's arithmetic, worked by hand; and the rates a db's finished runs measure.
#include "tuner/sweep_cost.hpp"

#include <chrono>
#include <cmath>
#include <ctime>

#include <gtest/gtest.h>

#include "support/scratch_dir.hpp"
#include "support/tuning_fixtures.hpp"
#include "tuner/candidate_pruning.hpp"
#include "tuner/program_timing.hpp"

namespace gemmtune {
namespace {

TimingSettings default_timing() {  // profiles/default.json's
  TimingSettings t;
  t.warmup_calls = 5;
  t.batch_calls = 20;
  t.min_samples = 30;
  t.max_noise_pct = 0.5;
  t.min_time_ms = 5;
  t.max_time_ms = 200;
  return t;
}

TEST(SweepCost, SampledCallsAreTheStoppingRulesMinimumInWholeBatchesTimesItsExcessUpToTheCap) {
  const TimingSettings t = default_timing();
  // 10 us calls: 5 ms of them is 500 calls (more than 30), 25 batches; 1.28 times that is 640 calls, 32 batches.
  SampledCalls sc = expected_sampled_calls(10e-6, t, 1.28);
  EXPECT_DOUBLE_EQ(sc.calls, 640);
  EXPECT_DOUBLE_EQ(sc.batches, 32);
  // 5 ms calls: 30 samples round up to 2 batches (40 calls); 200 ms is 40 calls, so the cap holds it at 40.
  sc = expected_sampled_calls(5e-3, t, 1.28);
  EXPECT_DOUBLE_EQ(sc.calls, 40);
  EXPECT_DOUBLE_EQ(sc.batches, 2);
  // 1 ms calls: 40 calls minimum, 51.2 expected, under the cap of 200.
  sc = expected_sampled_calls(1e-3, t, 1.28);
  EXPECT_DOUBLE_EQ(sc.calls, 51.2);
}

// Round numbers: the best call is 100 us (1e9 flops at 1e13 FLOP/s, no floor), 10 candidates, no finalist stage.
struct HandWorked {
  GemmProblem p = test::test_problem(500, 1000, 1000, MathMode::Fp32);  // 2·500·1000·1000 = 1e9 flops
  TimingSettings t = default_timing();
  CostRates r;
  HandWorked() {
    t.finalists = 0;
    r.call_floor_s = 0;
    r.fp32_flops_per_s = 1e13;
    r.reference_flops_per_s = 1e12;  // 1 ms
    r.problem_overhead_s = 0.01;
    r.candidate_overhead_s = 0.002;
    r.sampled_overhead_s = 0.001;
    r.batch_overhead_s = 0.0005;
    r.sampled_beyond_minimum = 1.25;
    r.sampled_share = 0.2;  // 2 of 10 near the best
    r.sampled_slowdown = 1.0;
    r.pruned_slowdown = 2.0;
  }
};

TEST(SweepCost, APrunedProblemCostsItsOverheadsVerificationFirstBatchesAndTheSampledFew) {
  HandWorked h;
  ASSERT_DOUBLE_EQ(h.p.flops(), 1e9);
  // Sampled calls of a 100 us candidate: max(30, 50) = 50 -> 60 (3 batches), x1.25 = 75 calls, 3.75 batches.
  const double sampled_each = 0.001 + (5 + 75 + 20) * 100e-6 + 3.75 * 0.0005;  // 0.012875
  const double expected = 0.01 + 0.001                       // problem overhead, reference
                          + 10 * 0.002 + 2 * 100e-6 + 8 * 200e-6  // candidate overheads, verification calls
                          + 2 * sampled_each                 // the two near the best, sampled
                          + 10 * 0.0005 + 5 * (2 * 100e-6 + 8 * 200e-6);  // every first batch (5 calls)
  EXPECT_NEAR(problem_cost_s(h.p, 10, h.t, h.r), expected, 1e-12);
  h.r.scale = 1.5;
  EXPECT_NEAR(problem_cost_s(h.p, 10, h.t, h.r), 1.5 * expected, 1e-12);
}

TEST(SweepCost, WithoutPruningEveryCandidateIsSampledAndNoFirstBatchRuns) {
  HandWorked h;
  h.t.prune = false;
  const double near_each = 0.001 + (5 + 75 + 20) * 100e-6 + 3.75 * 0.0005;
  // 200 us calls: max(30, 25) = 30 -> 40 (2 batches), x1.25 = 50 calls, 2.5 batches.
  const double slow_each = 0.001 + (5 + 50 + 20) * 200e-6 + 2.5 * 0.0005;
  const double expected = 0.011 + 10 * 0.002 + 2 * 100e-6 + 8 * 200e-6 + 2 * near_each + 8 * slow_each;
  EXPECT_NEAR(problem_cost_s(h.p, 10, h.t, h.r), expected, 1e-12);
  h.t.prune = true;
  EXPECT_LT(problem_cost_s(h.p, 10, h.t, h.r), 0.5 * expected);
}

TEST(SweepCost, TheFinalistStageCostsWhatItsBatchingTimesAtItsShareOfProblems) {
  HandWorked h;
  const double without = problem_cost_s(h.p, 10, h.t, h.r);
  h.t.finalists = 3;
  h.r.finalist_share = 0.5;
  h.r.finalist_challengers = 2;
  const ProgramBatching b = program_batching(100, 4, 3);  // four conditions, heuristic-first and two challengers
  const double batches = (b.repeats + 1) * 4 * 3;
  const double stage = batches * (b.calls * 100e-6 + 0.0005) + 3 * 4 * 0.001;
  EXPECT_NEAR(problem_cost_s(h.p, 10, h.t, h.r) - without, 0.5 * stage, 1e-12);
}

TEST(SweepCost, TheShardCutPricesAPlannedProblemAtTheBuiltInRatesInWholeMicroseconds) {
  SweepProfile profile;
  profile.lt.top_k = 8;
  PlannedProblem pp;
  pp.problem = test::test_problem(2048, 2048, 2048);
  pp.own_variants = {"a", "b", "c"};
  pp.lt_search = "heuristic top 8";
  EXPECT_EQ(expected_candidates(pp, profile.lt), 11);
  EXPECT_EQ(estimated_cost_us(pp, profile), std::llround(problem_cost_s(pp.problem, 11, profile.timing, {}) * 1e6));
  profile.lt.by_algo_id = true;
  profile.lt.per_algo_id = 4;
  profile.lt.unfused_baseline = true;
  // bias+gelu: the unfused GEMM's top 8 and the bias-in-GEMM call's top 8; a problem with no bias has only the first.
  EXPECT_EQ(expected_candidates(pp, profile.lt), 3 + 8 + 4 * kAlgoIdsAnswered + 8 + 8);
  pp.problem.epi = Epilogue{};
  EXPECT_EQ(expected_candidates(pp, profile.lt), 3 + 8 + 4 * kAlgoIdsAnswered + 8);
}

std::string utc_seconds_ago(int seconds) {
  const std::time_t t = std::time(nullptr) - seconds;
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

MeasurementRecord pruned(MeasurementRecord r) {
  r.message = std::string(kPrunedFirstBatch) + ": fastest of 5 first-batch calls ...";
  return r;
}

TEST(SweepCost, ADbsFinishedRunsMeasureRatesSharesMultiplesAndTheScaleOfTheirWallTime) {
  test::ScratchDir scratch;
  TuningDb db(scratch.path("t.db"));
  const DeviceIdentity device = test::test_device();
  RunInfo run = test::test_run(device, "p");
  run.started_at = utc_seconds_ago(100);
  const std::int64_t id = db.begin_run(run);
  const GemmProblem tf32 = test::test_problem(1024, 1024, 1024);  // 2^31 flops
  // Best 10 us and 11 us sampled; 20, 30 and 40 us pruned; one candidate that could not run does not count.
  db.store_problem(id, tf32,
                   {test::lt_record(tf32, 1, 10.0), test::own_record(tf32, "a", 11.0),
                    pruned(test::own_record(tf32, "b", 20.0)), pruned(test::own_record(tf32, "c", 30.0)),
                    pruned(test::own_record(tf32, "d", 40.0)),
                    test::lt_record(tf32, 2, 0, MeasureStatus::Unsupported)});
  db.finish_run(id);
  db.begin_run(test::test_run(device, "p"));  // unfinished: left out
  db.begin_run(test::test_run(device, "other"));

  const TimingSettings t = default_timing();
  std::string note;
  const CostRates r = rates_from_db(db, "p", t, CostRates{}, &note);
  EXPECT_TRUE(note.empty()) << note;
  EXPECT_NEAR(r.tf32_flops_per_s, std::pow(2.0, 31) / (10e-6 - CostRates{}.call_floor_s), 1e3);
  EXPECT_EQ(r.fp32_flops_per_s, CostRates{}.fp32_flops_per_s) << "no fp32 problem: the base rate stays";
  EXPECT_DOUBLE_EQ(r.sampled_share, 2.0 / 5);
  EXPECT_DOUBLE_EQ(r.pruned_slowdown, (2.0 + 3.0 + 4.0) / 3);
  EXPECT_DOUBLE_EQ(r.sampled_slowdown, (1.0 + 1.1) / 2);
  // The scale makes the model's price of what the run measured (5 candidates ran) its wall time, 100 s (+-2).
  CostRates unscaled = r;
  unscaled.scale = 1;
  const double wall = r.scale * problem_cost_s(tf32, 5, t, unscaled);
  EXPECT_NEAR(wall, 100, 2.5);
  EXPECT_NE(r.source.find("1 run of 'p'"), std::string::npos) << r.source;
  EXPECT_NE(r.describe().find("40% of candidates sampled to convergence at 1.05x the best, the rest pruned at 3.00x"),
            std::string::npos)
      << r.describe();

  const CostRates none = rates_from_db(db, "never swept", t, CostRates{}, &note);
  EXPECT_EQ(none.scale, 1);
  EXPECT_EQ(none.source, CostRates{}.source);
  EXPECT_NE(note.find("no finished run of profile 'never swept'"), std::string::npos) << note;
}

}  // namespace
}  // namespace gemmtune
