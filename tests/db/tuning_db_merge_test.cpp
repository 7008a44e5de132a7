// TuningDb::merge_db: the dbs of a sharded sweep, merged, are the db of one unsharded sweep (the same problems
// done, measurements and cache entries), merging again changes nothing, and a bad source changes nothing either.
#include <algorithm>
#include <filesystem>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "db/sqlite_db.hpp"
#include "db/tuning_db.hpp"
#include "profile/sweep_profile.hpp"
#include "support/scratch_dir.hpp"
#include "support/tuning_fixtures.hpp"
#include "tuner/plan.hpp"
#include "tuner/shard_plan.hpp"

namespace gemmtune {
namespace {

using test::lt_record;
using test::own_record;

constexpr const char* kProfile = R"({
  "name": "merge-test",
  "shapes": [[256, 256, 256], [512, 512, 512], [1024, 1024, 1024], [768, 3072, 768], [1000, 3000, 257], [64, 64, 64]],
  "epilogues": ["none", "bias+gelu"], "modes": ["tf32", "fp32"], "backends": ["own", "lt"]})";

// Made-up but distinct records per problem: a failed candidate that would be fastest, and three verified ones.
std::vector<MeasurementRecord> records_for(const GemmProblem& p, std::size_t i) {
  const double median = 10.0 + 3.7 * static_cast<double>(i);
  return {lt_record(p, 9, median * 0.5, MeasureStatus::VerifyFailed),
          lt_record(p, 1 + static_cast<int>(i % 3), median * 1.2), lt_record(p, 7, median),
          own_record(p, "variant_" + std::to_string(i % 4), median * 1.1)};
}

struct DbContent {
  std::vector<std::pair<std::string, std::string>> done;  // (device key, problem key)
  std::vector<MeasurementRecord> measurements;            // of every run, by problem key and candidate id
  std::vector<CacheEntry> cache;
  std::size_t runs = 0;
};

DbContent content_of(const std::string& path) {
  DbContent c;
  {
    const SqliteDb raw(path, SqliteDb::Access::ReadOnly);
    SqliteStatement done = raw.prepare("SELECT device_key, problem_key FROM problems_done ORDER BY 1, 2");
    while (done.step()) c.done.emplace_back(done.column_text(0), done.column_text(1));
  }
  const TuningDb db(path, TuningDb::Access::ReadOnly);
  for (const RunInfo& run : db.runs()) {
    ++c.runs;
    for (MeasurementRecord& r : db.measurements(run.id)) c.measurements.push_back(std::move(r));
  }
  std::sort(c.measurements.begin(), c.measurements.end(), [](const MeasurementRecord& a, const MeasurementRecord& b) {
    return std::make_tuple(a.problem.key(), a.candidate.id()) < std::make_tuple(b.problem.key(), b.candidate.id());
  });
  c.cache = db.cache_entries();
  return c;
}

void expect_same_content(const DbContent& merged, const DbContent& unsharded, const std::string& merged_path) {
  EXPECT_EQ(merged.done, unsharded.done);
  ASSERT_EQ(merged.measurements.size(), unsharded.measurements.size());
  for (std::size_t i = 0; i < merged.measurements.size(); ++i)
    test::expect_same_record(merged.measurements[i], unsharded.measurements[i]);
  ASSERT_EQ(merged.cache.size(), unsharded.cache.size());
  std::set<std::int64_t> run_ids;
  for (const RunInfo& r : TuningDb(merged_path, TuningDb::Access::ReadOnly).runs()) run_ids.insert(r.id);
  for (std::size_t i = 0; i < merged.cache.size(); ++i) {
    const CacheEntry &m = merged.cache[i], &u = unsharded.cache[i];
    EXPECT_EQ(m.device_key, u.device_key);
    EXPECT_EQ(m.problem.key(), u.problem.key());
    test::expect_same_candidate(m.candidate, u.candidate);
    test::expect_same_stats(m.stats, u.stats);
    EXPECT_EQ(m.verify_error, u.verify_error);
    EXPECT_EQ(m.gemmtune_version, u.gemmtune_version);
    // Measured by a run that is now in the merged db: its own entry, as in the unsharded db.
    EXPECT_EQ(m.origin, "") << m.problem.key();
    EXPECT_EQ(run_ids.count(m.run_id), 1u) << m.problem.key();
  }
}

class TuningDbMerge : public ::testing::Test {
 protected:
  void SetUp() override {
    profile = parse_sweep_profile(kProfile, "merge-test.json");
    plan = make_sweep_plan(profile, {}, {});
    ASSERT_EQ(plan.problems.size(), 24u);
    TuningDb one(unsharded());
    const std::int64_t run = one.begin_run(test::test_run(device, "merge-test"));
    for (std::size_t i = 0; i < plan.problems.size(); ++i)
      one.store_problem(run, plan.problems[i].problem, records_for(plan.problems[i].problem, i));
    one.finish_run(run);
  }

  // The same problems and records, cut into 4 shard dbs; shard 1 was killed halfway and resumed (two runs).
  std::vector<std::string> write_shards() {
    std::vector<std::string> paths;
    const std::vector<Shard> shards = partition_plan(plan, profile, 4);
    for (std::size_t s = 0; s < shards.size(); ++s) {
      paths.push_back(scratch.path("shard-" + std::to_string(s) + ".db"));
      TuningDb db(paths.back());
      std::int64_t run = db.begin_run(test::test_run(device, "merge-test"));
      const std::vector<std::size_t>& mine = shards[s].problems;
      for (std::size_t j = 0; j < mine.size(); ++j) {
        if (s == 1 && j == mine.size() / 2) run = db.begin_run(test::test_run(device, "merge-test"));  // resumed
        db.store_problem(run, plan.problems[mine[j]].problem, records_for(plan.problems[mine[j]].problem, mine[j]));
      }
      db.finish_run(run);
    }
    return paths;
  }

  std::string unsharded() const { return scratch.path("unsharded.db"); }
  test::ScratchDir scratch;
  DeviceIdentity device = test::test_device();
  SweepProfile profile;
  SweepPlan plan;
};

TEST_F(TuningDbMerge, ShardDbsMergedEqualTheUnshardedDb) {
  const std::vector<std::string> shards = write_shards();
  const std::string out = scratch.path("merged.db");
  {
    TuningDb merged(out);
    int problems = 0;
    for (const std::string& s : shards) {
      const DbMergeCounts c = merged.merge_db(s);
      problems += c.problems_added;
      EXPECT_EQ(c.cache.replaced + c.cache.kept, 0) << "disjoint shards never meet in the cache";
    }
    EXPECT_EQ(problems, 24);
  }
  const DbContent merged = content_of(out);
  EXPECT_EQ(merged.runs, 5u);  // 4 shards, one of them resumed once
  expect_same_content(merged, content_of(unsharded()), out);
}

TEST_F(TuningDbMerge, MergingTheSameShardsAgainChangesNothing) {
  const std::vector<std::string> shards = write_shards();
  const std::string out = scratch.path("merged.db");
  TuningDb merged(out);
  for (const std::string& s : shards) merged.merge_db(s);
  const DbContent once = content_of(out);
  for (const std::string& s : shards) {
    const DbMergeCounts c = merged.merge_db(s);
    EXPECT_EQ(c.runs_added, 0);
    EXPECT_GT(c.runs_present, 0);
    EXPECT_EQ(c.problems_added, 0);
    EXPECT_EQ(c.measurements_added, 0);
    EXPECT_EQ(c.done_added, 0);
    EXPECT_EQ(c.cache.added + c.cache.replaced, 0);
  }
  const DbContent twice = content_of(out);
  EXPECT_EQ(twice.runs, once.runs);
  expect_same_content(twice, content_of(unsharded()), out);
}

TEST_F(TuningDbMerge, ShardRunsThatStartedInTheSameSecondStayTwoRuns) {
  const std::vector<Shard> shards = partition_plan(plan, profile, 2);
  RunInfo same = test::test_run(device, "merge-test");
  same.started_at = "2026-11-24T06:00:00Z";
  const std::string out = scratch.path("merged.db");
  TuningDb merged(out);
  for (std::size_t s = 0; s < 2; ++s) {
    const std::string path = scratch.path("same-second-" + std::to_string(s) + ".db");
    {
      TuningDb db(path);
      const std::int64_t run = db.begin_run(same);
      for (const std::size_t i : shards[s].problems)
        db.store_problem(run, plan.problems[i].problem, records_for(plan.problems[i].problem, i));
    }
    EXPECT_EQ(merged.merge_db(path).runs_added, 1);
  }
  EXPECT_EQ(merged.runs().size(), 2u);
}

TEST_F(TuningDbMerge, FasterCacheEntryStaysAndLaterCompletionWinsWhereBothHaveAProblem) {
  const GemmProblem p = plan.problems[0].problem;
  const std::string slow = scratch.path("slow.db"), fast = scratch.path("fast.db");
  {
    TuningDb db(slow);
    const std::int64_t run = db.begin_run(test::test_run(device, "merge-test"));
    db.store_problem(run, p, {lt_record(p, 3, 50.0)});
  }
  {
    TuningDb db(fast);
    const std::int64_t run = db.begin_run(test::test_run(device, "merge-test"));
    db.store_problem(run, p, {lt_record(p, 4, 40.0)});
  }
  TuningDb merged(scratch.path("merged.db"));
  merged.merge_db(slow);
  const DbMergeCounts c = merged.merge_db(fast);
  EXPECT_EQ(c.cache.replaced, 1);
  EXPECT_EQ(c.done_added, 0);
  EXPECT_EQ(merged.cached(device.key(), p.key())->stats.median_us, 40.0);
  EXPECT_EQ(merged.merge_db(slow).cache.kept, 1);
  EXPECT_EQ(merged.cached(device.key(), p.key())->stats.median_us, 40.0);
}

TEST_F(TuningDbMerge, ABadSourceOrTheTargetItselfIsRefusedAndChangesNothing) {
  const std::vector<std::string> shards = write_shards();
  const std::string out = scratch.path("merged.db");
  const std::string text = scratch.path("not-a-db.db");
  test::write_bytes(text, "hello, I am not SQLite\n");
  {
    TuningDb merged(out);
    merged.merge_db(shards[0]);
  }
  TuningDb merged(out);
  EXPECT_THROW(merged.merge_db(text), InputError);
  EXPECT_THROW(merged.merge_db(out), InputError);
  EXPECT_THROW(merged.merge_db(scratch.path("missing.db")), InputError);
  EXPECT_EQ(test::read_bytes(text), "hello, I am not SQLite\n");
  EXPECT_FALSE(std::filesystem::exists(scratch.path("missing.db")));
  EXPECT_EQ(content_of(out).measurements.size(), content_of(shards[0]).measurements.size());
}

}  // namespace
}  // namespace gemmtune
