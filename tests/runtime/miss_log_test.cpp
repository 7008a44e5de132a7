#include "runtime/miss_log.hpp"

#include <cstdint>
#include <map>

#include <gtest/gtest.h>

#include "common/default_db.hpp"
#include "common/error.hpp"
#include "db/sqlite_db.hpp"
#include "db/tuning_db.hpp"
#include "problem/pass_gemm.hpp"
#include "support/run_gemmtune.hpp"
#include "support/scoped_env.hpp"
#include "support/scratch_dir.hpp"
#include "support/tuning_fixtures.hpp"

namespace gemmtune::runtime {
namespace {

using test::run_gemmtune;
using test::test_problem;

const std::string kDevice = test::test_device("NVIDIA Missing").key();

// Each recorded problem key of `device_key` with the number of misses counted for it.
std::map<std::string, std::int64_t> miss_counts(const std::string& db_path, const std::string& device_key) {
  const SqliteDb db(db_path, SqliteDb::Access::ReadOnly);
  SqliteStatement select = db.prepare("SELECT problem_key, count FROM misses WHERE device_key = ?1");
  select.bind(1, device_key);
  std::map<std::string, std::int64_t> counts;
  while (select.step()) counts.emplace(select.column_text(0), select.column_int64(1));
  return counts;
}

TEST(MissLog, FlushWritesThePendingKeysOnceAndCreatesTheDb) {
  const test::ScratchDir dir;
  const std::string path = dir.path("fresh.db");
  const GemmProblem fwd = test_problem(300, 200, 100);
  MissLog log;
  log.record(fwd.key());
  log.record(backward_problem(fwd, Pass::GradA).key());
  EXPECT_EQ(log.pending(), 2u);
  log.flush(path, kDevice);
  EXPECT_EQ(log.pending(), 0u);
  log.flush(path, kDevice);  // nothing new: no second count
  const std::map<std::string, std::int64_t> expected = {{fwd.key(), 1}, {backward_problem(fwd, Pass::GradA).key(), 1}};
  EXPECT_EQ(miss_counts(path, kDevice), expected);
  EXPECT_TRUE(TuningDb(path, TuningDb::Access::ReadOnly).misses("another device").empty());
}

TEST(MissLog, AFailedFlushThrowsAndKeepsTheKeysForTheNextTry) {
  const test::ScratchDir dir;
  MissLog log;
  log.record(test_problem(64, 64, 64).key());
  EXPECT_THROW(log.flush(dir.path("no/such/dir/x.db"), kDevice), InputError);
  EXPECT_EQ(log.pending(), 1u);
  log.flush(dir.path("x.db"), kDevice);
  EXPECT_EQ(log.pending(), 0u);
}

TEST(MissLog, FlushToTheDefaultDbCreatesItsCacheDirectories) {
  const test::ScratchDir dir;
  test::ScopedEnv env;
  env.unset("GEMMTUNE_DB").set("XDG_CACHE_HOME", dir.path("cache"));
  MissLog log;
  log.record(test_problem(64, 64, 64).key());
  log.flush(default_db().path, kDevice);
  EXPECT_EQ(TuningDb(dir.path("cache/gemmtune/gemmtune.db"), TuningDb::Access::ReadOnly).misses(kDevice).size(), 1u);
}

TEST(MissLog, AnUnwritableDefaultDbIsRefusedNamingItsVariableAndKeepsTheKeys) {
  const test::ScratchDir dir;
  test::write_bytes(dir.path("file"), "not a directory");
  test::ScopedEnv env;
  env.set("GEMMTUNE_DB", dir.path("file/tune.db"));
  MissLog log;
  log.record(test_problem(64, 64, 64).key());
  try {
    log.flush(default_db().path, kDevice);
    ADD_FAILURE() << "flushed into a path through a regular file";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("placed by GEMMTUNE_DB"), std::string::npos) << e.what();
  }
  EXPECT_EQ(log.pending(), 1u);
}

// The loop PyTorch TunableOp calls record-untuned + offline tuning: what a runtime missed is what the sweep plans.
TEST(SweepFromMisses, DryRunPlansExactlyTheRecordedProblemsWithoutAGpu) {
  const test::ScratchDir dir;
  const std::string path = dir.path("misses.db");
  const GemmProblem fwd = test_problem(300, 200, 100);
  const GemmProblem grad_b = backward_problem(fwd, Pass::GradB);
  MissLog log;
  log.record(fwd.key());
  log.record(grad_b.key());
  log.flush(path, kDevice);
  MissLog again;  // a second run missed the forward again: it is planned first
  again.record(fwd.key());
  again.flush(path, kDevice);

  const auto r = run_gemmtune({"sweep", "--from-misses", "--db", path, "--device-key", kDevice, "--dry-run"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("plan for profile 'misses': 2 problems"), std::string::npos) << r.output;
  const auto first = r.output.find("[1/2] " + fwd.key());
  const auto second = r.output.find("[2/2] " + grad_b.key());
  EXPECT_NE(first, std::string::npos) << r.output;
  EXPECT_NE(second, std::string::npos) << r.output;
  EXPECT_NE(r.output.find("heuristic top-4"), std::string::npos) << "quick's settings by default\n" << r.output;

  const auto with_profile = run_gemmtune(
      {"sweep", "--from-misses", "--db", path, "--device-key", kDevice, "--dry-run", "--profile", "default"});
  EXPECT_EQ(with_profile.exit_code, 0) << with_profile.output;
  EXPECT_NE(with_profile.output.find("heuristic top-8"), std::string::npos) << with_profile.output;
}

TEST(SweepFromMisses, NothingRecordedIsNothingToTune) {
  const test::ScratchDir dir;
  const std::string path = dir.path("empty.db");
  TuningDb{path};
  const auto r = run_gemmtune({"sweep", "--from-misses", "--db", path, "--device-key", kDevice, "--dry-run"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("nothing to tune"), std::string::npos) << r.output;
}

TEST(SweepFromMisses, AMissingDbIsBadInput) {
  const test::ScratchDir dir;
  const auto r =
      run_gemmtune({"sweep", "--from-misses", "--db", dir.path("none.db"), "--device-key", kDevice, "--dry-run"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST(SweepFromMisses, WithoutAProfileOrMissesTheProfileIsRequired) {
  const auto r = run_gemmtune({"sweep", "--dry-run"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--profile is required"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace gemmtune::runtime
