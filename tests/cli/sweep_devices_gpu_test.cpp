// On a GPU: `sweep --devices all` fills one db with every problem (on however many GPUs the machine has), and a
// sweep run as two shards and merged has the problem keys of the plan, each once. Without one: the db check fails on
// a db that holds nothing.
#include <set>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "db/sqlite_db.hpp"
#include "db/tuning_db.hpp"
#include "support/gpu_test.hpp"
#include "support/run_gemmtune.hpp"
#include "support/scratch_dir.hpp"
#include "support/tuning_fixtures.hpp"

namespace gemmtune {
namespace {

// Four small problems, cuBLASLt only, sampled briefly: seconds, not minutes.
constexpr const char* kProfile = R"({
  "name": "devices-test", "shapes": [[128, 128, 128], [256, 128, 64]], "epilogues": ["none", "bias+relu"],
  "modes": ["fp32"], "backends": ["lt"], "lt": {"top_k": 2},
  "timing": {"min_samples": 10, "min_time_ms": 1, "max_time_ms": 20, "max_noise_pct": 5}})";

// (device key, problem key) of every done-mark.
std::set<std::pair<std::string, std::string>> done(const std::string& db_path) {
  const SqliteDb db(db_path, SqliteDb::Access::ReadOnly);
  SqliteStatement select = db.prepare("SELECT device_key, problem_key FROM problems_done");
  std::set<std::pair<std::string, std::string>> out;
  while (select.step()) out.emplace(select.column_text(0), select.column_text(1));
  return out;
}

std::set<std::string> device_keys(const std::string& db_path) {
  std::set<std::string> keys;
  for (const auto& [device, problem] : done(db_path)) keys.insert(device);
  return keys;
}

// The device key of every GPU model this machine has, as `gemmtune devices --json` lists them.
std::set<std::string> machine_device_keys() {
  const auto r = test::run_gemmtune({"devices", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::set<std::string> keys;
  if (r.exit_code == 0)
    for (const auto& device : nlohmann::json::parse(r.output)) keys.insert(device["key"].get<std::string>());
  return keys;
}

// The db holds the profile's four problems done for each GPU model of the machine and for no other device key.
void expect_every_problem_of_every_model(const std::string& db_path, const std::set<std::string>& models) {
  ASSERT_FALSE(models.empty()) << "no GPU model to expect";
  EXPECT_EQ(device_keys(db_path), models);
  EXPECT_EQ(done(db_path).size(), 4 * models.size());
}

// The check above, deliberately given a db without a done-mark, as a sweep that stored nothing would leave: it fails
// (done == 4 · device keys, its check before, held there as 0 == 0). No GPU.
TEST(SweepDevicesDbCheck, FailsOnADbWithNoDoneMark) {
  const test::ScratchDir dir;
  const std::string db = dir.path("empty.db");
  TuningDb{db};
  ASSERT_TRUE(done(db).empty());
  testing::TestPartResultArray failures;
  {
    const testing::ScopedFakeTestPartResultReporter capture(
        testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    expect_every_problem_of_every_model(db, {test::test_device().key()});
  }
  ASSERT_EQ(failures.size(), 2);
  EXPECT_NE(std::string(failures.GetTestPartResult(0).message()).find("device_keys(db_path)"), std::string::npos);
  EXPECT_NE(std::string(failures.GetTestPartResult(1).message()).find("done(db_path).size()"), std::string::npos);
}

TEST(SweepDevicesGpu, DevicesAllPutsEveryProblemOfEveryGpuModelInOneDb) {
  GT_REQUIRE_GPU();
  test::ScratchDir dir;
  const std::string profile = dir.path("p.json"), db = dir.path("d.db");
  test::write_bytes(profile, kProfile);
  const auto r = test::run_gemmtune({"sweep", "--profile", profile, "--devices", "all", "--db", db});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[4/"), std::string::npos) << "one progress line counts every worker\n" << r.output;
  const std::set<std::string> models = machine_device_keys();
  expect_every_problem_of_every_model(db, models);
  // A second run with --resume measures nothing again.
  const auto again = test::run_gemmtune({"sweep", "--profile", profile, "--devices", "all", "--db", db, "--resume"});
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("skipped (--resume)"), std::string::npos) << again.output;
  expect_every_problem_of_every_model(db, models);
}

TEST(SweepDevicesGpu, TwoShardsMergedHaveEveryProblemOnce) {
  GT_REQUIRE_GPU();
  test::ScratchDir dir;
  const std::string profile = dir.path("p.json");
  test::write_bytes(profile, kProfile);
  for (const char* shard : {"0/2", "1/2"}) {
    const auto r = test::run_gemmtune({"sweep", "--profile", profile, "--shard", shard, "--db",
                                       dir.path(std::string("shard-") + shard[0] + ".db")});
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  const std::string merged = dir.path("merged.db"), doc = dir.path("merged.json");
  const auto m = test::run_gemmtune(
      {"cache", "merge", merged, dir.path("shard-0.db"), dir.path("shard-1.db"), "--sweep-json", doc});
  ASSERT_EQ(m.exit_code, 0) << m.output;
  const auto a = done(dir.path("shard-0.db")), b = done(dir.path("shard-1.db")), all = done(merged);
  EXPECT_EQ(all.size(), 4u);
  EXPECT_EQ(a.size() + b.size(), 4u) << "every problem in exactly one shard";
  const nlohmann::json sweep = nlohmann::json::parse(test::read_bytes(doc));
  std::set<std::string> problems;
  for (const auto& rec : sweep["results"]) problems.insert(rec["problem_key"].get<std::string>());
  EXPECT_EQ(problems.size(), 4u);
}

}  // namespace
}  // namespace gemmtune
