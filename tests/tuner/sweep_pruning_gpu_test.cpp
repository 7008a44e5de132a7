// Pruning in a real sweep: every record says why its sampling stopped, the pruned ones keep their first batch and say
// so with the numbers, heuristic-first and the kept candidate were sampled to convergence, and the problem's cost
// adds up; without pruning every verified candidate converges (or hits a cap) and none is pruned.
#include <gtest/gtest.h>

#include "problem/candidate_choice.hpp"
#include "profile/sweep_profile.hpp"
#include "support/gpu_test.hpp"
#include "tuner/candidate_pruning.hpp"
#include "tuner/plan.hpp"
#include "tuner/sweep.hpp"

namespace gemmtune {
namespace {

// A small cube in tf32, where dozens of our variants and cuBLASLt's answers run and many are far from the best.
constexpr const char* kProfile = R"({
  "name": "pruning-test", "shapes": [[512, 512, 512]], "epilogues": ["none"], "modes": ["tf32"],
  "backends": ["own", "lt"], "lt": {"top_k": 4},
  "timing": {"warmup_calls": 5, "min_samples": 20, "min_time_ms": 2, "max_time_ms": 50, "max_noise_pct": 1}})";

ProblemResult sweep_once(bool prune) {
  SweepProfile profile = parse_sweep_profile(kProfile, "pruning-test.json");
  profile.timing.prune = prune;
  SweepOptions options;
  options.quiet = true;
  SweepResult result = run_sweep(make_sweep_plan(profile, {}, {}), profile, options);
  EXPECT_EQ(result.problems.size(), 1u);
  EXPECT_GT(result.wall_s, 0);
  return result.problems.at(0);
}

bool sampled_to_the_end(const TimingStats& s) {
  return s.stopped_by == "converged" || s.stopped_by == "time cap" || s.stopped_by == "wall cap";
}

TEST(SweepPruningGpu, PrunedRecordsKeepTheirFirstBatchAndSaySoTheKeptOneAndHeuristicFirstConverged) {
  GT_REQUIRE_GPU();
  const ProblemResult pr = sweep_once(true);
  int ok = 0, pruned = 0;
  for (const MeasurementRecord& r : pr.records) {
    if (r.status != MeasureStatus::Ok) continue;
    ++ok;
    if (r.stats.stopped_by == kPrunedFirstBatch) {
      ++pruned;
      EXPECT_EQ(r.stats.samples, 5) << r.candidate.id() << ": the first batch is the warm-up calls";
      EXPECT_EQ(r.message.rfind("pruned: first_batch: ", 0), 0u) << r.candidate.id() << ": " << r.message;
      EXPECT_EQ(r.stats.events_per_call_us, 0) << r.candidate.id() << ": no events check after a first batch";
      EXPECT_GT(r.stats.median_us, 0);
    } else {
      EXPECT_TRUE(sampled_to_the_end(r.stats)) << r.candidate.id() << ": '" << r.stats.stopped_by << "'";
      EXPECT_GE(r.stats.samples, 20) << r.candidate.id();
      EXPECT_GT(r.stats.events_per_call_us, 0) << r.candidate.id();
    }
  }
  EXPECT_GT(pruned, 0) << "of " << ok << " verified candidates at 512^3 tf32, some are 20% slower than the best";
  const MeasurementRecord* first = heuristic_first(pr.records);
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(sampled_to_the_end(first->stats)) << first->stats.stopped_by;
  const MeasurementRecord* kept = kept_candidate(pr);
  ASSERT_NE(kept, nullptr);
  EXPECT_TRUE(sampled_to_the_end(kept->stats)) << kept->candidate.id() << ": " << kept->stats.stopped_by;

  EXPECT_EQ(pr.cost.candidates, static_cast<int>(pr.records.size()));
  EXPECT_EQ(pr.cost.sampled + pr.cost.pruned, ok);
  EXPECT_EQ(pr.cost.pruned, pruned);
  const double stages = pr.cost.prepare_s + pr.cost.verify_s + pr.cost.sample_s + pr.cost.finalist_s + pr.cost.store_s;
  EXPECT_GT(pr.cost.verify_s, 0);
  EXPECT_GT(pr.cost.sample_s, 0);
  EXPECT_LE(stages, pr.cost.wall_s + 1e-6);
}

TEST(SweepPruningGpu, WithoutPruningEveryVerifiedCandidateIsSampledToTheEnd) {
  GT_REQUIRE_GPU();
  const ProblemResult pr = sweep_once(false);
  int ok = 0;
  for (const MeasurementRecord& r : pr.records) {
    if (r.status != MeasureStatus::Ok) continue;
    ++ok;
    EXPECT_TRUE(sampled_to_the_end(r.stats)) << r.candidate.id() << ": '" << r.stats.stopped_by << "'";
    EXPECT_TRUE(r.message.empty()) << r.candidate.id() << ": " << r.message;
  }
  ASSERT_GT(ok, 0) << "of " << pr.records.size() << " candidates at 512^3 tf32, none verified";
  EXPECT_EQ(pr.cost.pruned, 0);
  EXPECT_EQ(pr.cost.sampled, ok);
  EXPECT_EQ(pr.cost.out_of_reach, 0) << "the reach rule is part of pruning";
}

}  // namespace
}  // namespace gemmtune
