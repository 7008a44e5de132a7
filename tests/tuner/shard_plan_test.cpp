// The cut of a plan into shards: every problem in exactly one shard, the same cut every time, and shards whose
// estimated times are close enough that N machines finish together.
#include <algorithm>
#include <numeric>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "profile/sweep_profile.hpp"
#include "tuner/plan.hpp"
#include "tuner/shard_plan.hpp"

namespace gemmtune {
namespace {

struct FullPlan {
  SweepProfile profile = load_sweep_profile("full", default_profiles_dir());
  SweepPlan plan = make_sweep_plan(profile, {}, {});
};

const FullPlan& full() {
  static const FullPlan f;
  return f;
}

TEST(ShardPlan, FullProfileCutsCompleteDisjointStableAndBalancedFor2And8And64) {
  const FullPlan& f = full();
  ASSERT_GT(f.plan.problems.size(), 30000u);
  for (const int n : {2, 8, 64}) {
    const std::vector<Shard> shards = partition_plan(f.plan, f.profile, n);
    ASSERT_EQ(shards.size(), static_cast<std::size_t>(n));
    std::vector<int> seen(f.plan.problems.size(), 0);
    std::int64_t total = 0;
    for (const Shard& s : shards) {
      EXPECT_TRUE(std::is_sorted(s.problems.begin(), s.problems.end())) << "a shard sweeps in plan order";
      std::int64_t cost = 0;
      for (const std::size_t i : s.problems) {
        ++seen.at(i);
        cost += estimated_cost_us(f.plan.problems[i], f.profile);
      }
      EXPECT_EQ(cost, s.estimated_us);
      total += s.estimated_us;
    }
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }))
        << "N = " << n << ": every problem in exactly one shard";
    const double mean = static_cast<double>(total) / n;
    for (std::size_t s = 0; s < shards.size(); ++s)
      EXPECT_LE(std::abs(static_cast<double>(shards[s].estimated_us) - mean), 0.10 * mean)
          << "N = " << n << ", shard " << s << ": " << shards[s].estimated_us << " us against a mean of " << mean;

    // Stable: a second process (here: a second call on a freshly made plan) cuts the same shards.
    const SweepPlan again = make_sweep_plan(load_sweep_profile("full", default_profiles_dir()), {}, {});
    const std::vector<Shard> recut = partition_plan(again, f.profile, n);
    for (std::size_t s = 0; s < shards.size(); ++s) EXPECT_EQ(recut[s].problems, shards[s].problems);
    EXPECT_EQ(plan_fingerprint(again), plan_fingerprint(f.plan));
  }
}

TEST(ShardPlan, CostGrowsWithFlopsAndWithCandidates) {
  const FullPlan& f = full();
  PlannedProblem small = f.plan.problems.front();
  PlannedProblem large = small;
  large.problem.m = large.problem.n = large.problem.k = 4096;
  small.problem.m = small.problem.n = small.problem.k = 256;
  EXPECT_LT(estimated_cost_us(small, f.profile), estimated_cost_us(large, f.profile));
  PlannedProblem fewer = large;
  fewer.own_variants.resize(fewer.own_variants.size() / 2);
  EXPECT_LT(estimated_cost_us(fewer, f.profile), estimated_cost_us(large, f.profile));
  PlannedProblem no_lt = large;
  no_lt.lt_search.clear();
  EXPECT_LT(estimated_cost_us(no_lt, f.profile), estimated_cost_us(large, f.profile));
}

TEST(ShardPlan, MoreShardsThanProblemsLeavesTheRestEmptyAndShardPlanKeepsOrder) {
  const FullPlan& f = full();
  SweepPlan three;
  three.profile = "three";
  three.problems.assign(f.plan.problems.begin(), f.plan.problems.begin() + 3);
  const std::vector<Shard> shards = partition_plan(three, f.profile, 5);
  std::size_t non_empty = 0, total = 0;
  for (const Shard& s : shards) {
    non_empty += s.problems.empty() ? 0 : 1;
    total += s.problems.size();
  }
  EXPECT_EQ(non_empty, 3u);
  EXPECT_EQ(total, 3u);
  const std::vector<Shard> one = partition_plan(three, f.profile, 1);
  const SweepPlan whole = shard_plan(three, one[0]);
  ASSERT_EQ(whole.problems.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(whole.problems[i].problem.key(), three.problems[i].problem.key());
  EXPECT_THROW(partition_plan(three, f.profile, 0), InputError);
}

TEST(ShardPlan, FingerprintChangesWithTheCandidates) {
  const FullPlan& f = full();
  SweepPlan changed;
  changed.problems.assign(f.plan.problems.begin(), f.plan.problems.begin() + 10);
  SweepPlan same = changed;
  EXPECT_EQ(plan_fingerprint(changed), plan_fingerprint(same));
  changed.problems[4].own_variants.pop_back();
  EXPECT_NE(plan_fingerprint(changed), plan_fingerprint(same));
}

TEST(ShardPlan, DurationTextReadsAsHoursMinutesSeconds) {
  EXPECT_EQ(duration_text(45), "45s");
  EXPECT_EQ(duration_text(750), "12m30s");
  EXPECT_EQ(duration_text(3900), "1h05m");
}

}  // namespace
}  // namespace gemmtune
