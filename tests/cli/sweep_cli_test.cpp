#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "db/tuning_db.hpp"
#include "support/run_gemmtune.hpp"
#include "support/scoped_env.hpp"
#include "support/scratch_dir.hpp"
#include "support/tuning_fixtures.hpp"

namespace gemmtune {
namespace {

using test::run_gemmtune;

TEST(SweepCli, DryRunPrintsThePlanWithoutAGpu) {
  const auto r = run_gemmtune({"sweep", "--profile", "quick", "--dry-run"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("plan for profile 'quick'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fwd:1024x1024x1024:nn:row:bias+relu:tf32"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("lt: heuristic top-4"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("own ("), std::string::npos) << "our kernel variants are listed\n" << r.output;
}

// 4096² in 128×128 tiles is 1024 tiles: 8 slices of partials need 512 MiB, 2 need 128 MiB, over the 64 MiB workspace.
TEST(SweepCli, DryRunSkipsSplitVariantsWhosePartialsExceedTheWorkspace) {
  test::ScratchDir dir;
  const std::string path = dir.path("big.json");
  test::write_bytes(path, R"({"name": "big", "shapes": [[4096, 4096, 4096], [256, 256, 256]], "modes": ["fp32"],
                              "lt": {"workspace_mib": 64}})");
  const auto r = run_gemmtune({"sweep", "--profile", path, "--dry-run"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("own skipped: fp32_128x128x16_w32x64_t8x8_s2_split8: needs 536870912 bytes of split-k "
                          "scratch, more than the 67108864-byte workspace"),
            std::string::npos)
      << r.output;
  // At 256³ (4 tiles, 2 MiB of partials) the same variant is a candidate.
  const std::size_t small = r.output.find("fwd:256x256x256");
  ASSERT_NE(small, std::string::npos) << r.output;
  const std::string small_section = r.output.substr(small);
  EXPECT_NE(small_section.find(" fp32_128x128x16_w32x64_t8x8_s2_split8"), std::string::npos) << r.output;
  EXPECT_EQ(small_section.find("own skipped: fp32_128x128x16_w32x64_t8x8_s2_split8"), std::string::npos) << r.output;
}

TEST(SweepCli, ModeFilterKeepsOnlyThatMode) {
  const auto r = run_gemmtune({"sweep", "--profile", "quick", "--dry-run", "--modes", "fp32"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find(":tf32\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(":fp32\n"), std::string::npos) << r.output;
}

// The fp32-equivalent policy, from the flag or the profile: fp32 problems also list our 3xtf32 variants; tf32 ones never.
TEST(SweepCli, Fp32EquivalentFlagOrProfileFieldAddsOur3xtf32VariantsToFp32ProblemsOnly) {
  test::ScratchDir dir;
  const std::string path = dir.path("eq.json");
  const std::string problems = R"("name": "eq", "shapes": [[512, 512, 512]], "modes": ["fp32", "tf32"])";
  test::write_bytes(path, "{" + problems + "}");
  const auto off = run_gemmtune({"sweep", "--profile", path, "--dry-run"});
  EXPECT_EQ(off.exit_code, 0) << off.output;
  EXPECT_EQ(off.output.find("3xtf32_"), std::string::npos) << "off by default\n" << off.output;

  const auto on = run_gemmtune({"sweep", "--profile", path, "--dry-run", "--fp32-equivalent"});
  EXPECT_EQ(on.exit_code, 0) << on.output;
  const std::size_t fp32 = on.output.find("fwd:512x512x512:nn:row:none:fp32");
  const std::size_t tf32 = on.output.find("fwd:512x512x512:nn:row:none:tf32");
  ASSERT_NE(fp32, std::string::npos) << on.output;
  ASSERT_NE(tf32, std::string::npos) << on.output;
  const std::string fp32_section = on.output.substr(fp32, tf32 > fp32 ? tf32 - fp32 : std::string::npos);
  const std::string tf32_section = on.output.substr(tf32, fp32 > tf32 ? fp32 - tf32 : std::string::npos);
  EXPECT_NE(fp32_section.find(" 3xtf32_"), std::string::npos) << on.output;
  EXPECT_NE(fp32_section.find("fp32-equivalent policy"), std::string::npos) << on.output;
  EXPECT_EQ(tf32_section.find("3xtf32_"), std::string::npos) << on.output;

  const std::string with_field = dir.path("eq_on.json");
  test::write_bytes(with_field, "{" + problems + R"(, "fp32_equivalent": true})");
  const auto from_profile = run_gemmtune({"sweep", "--profile", with_field, "--dry-run"});
  EXPECT_EQ(from_profile.exit_code, 0) << from_profile.output;
  EXPECT_EQ(from_profile.output, on.output) << "the profile field plans what the flag plans";
}

TEST(SweepCli, BadProfileExitsTwoNamingTheField) {
  test::ScratchDir dir;
  const std::string path = dir.path("bad.json");
  test::write_bytes(path, R"({"name": "bad", "shapes": [[64, 64, 64]], "modes": ["tf16"]})");
  const auto r = run_gemmtune({"sweep", "--profile", path, "--dry-run"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("modes[0]"), std::string::npos) << r.output;
}

TEST(SweepCli, MissingProfileOrBadModeExitsTwo) {
  EXPECT_EQ(run_gemmtune({"sweep", "--profile", "does-not-exist", "--dry-run"}).exit_code, 2);
  EXPECT_EQ(run_gemmtune({"sweep", "--profile", "quick", "--dry-run", "--modes", "int8"}).exit_code, 2);
  EXPECT_EQ(run_gemmtune({"sweep", "--profile", "quick", "--dry-run", "--backends", "cutlass"}).exit_code, 2);
}

// The problem keys a dry run lists, in order.
std::vector<std::string> planned_keys(const std::string& output) {
  std::vector<std::string> keys;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);)
    if (const std::size_t close = line.find("] ");
        line.rfind("[", 0) == 0 && close != std::string::npos && line.find(' ', close + 2) == std::string::npos)
      keys.push_back(line.substr(close + 2));
  return keys;
}

TEST(SweepCli, DryRunShardsTogetherAreThePlanEachProblemOnce) {
  const auto whole = run_gemmtune({"sweep", "--profile", "ci", "--dry-run"});
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  std::vector<std::string> expected = planned_keys(whole.output), got;
  ASSERT_FALSE(expected.empty());
  for (int i = 0; i < 3; ++i) {
    const auto r = run_gemmtune({"sweep", "--profile", "ci", "--dry-run", "--shard", std::to_string(i) + "/3"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("shard " + std::to_string(i) + "/3 (--shard " + std::to_string(i) + "/3) of plan "),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("estimated time per shard for N = 3"), std::string::npos) << r.output;
    for (const std::string& k : planned_keys(r.output)) got.push_back(k);
  }
  std::sort(expected.begin(), expected.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected);
}

TEST(SweepCli, DryRunWithShardsPrintsTheEstimateOfEachShard) {
  const auto r = run_gemmtune({"sweep", "--profile", "quick", "--dry-run", "--shards", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("  0/2 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  1/2 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("2 shards on 2 GPUs in parallel: about"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("built-in rates of an H200"), std::string::npos) << r.output;
}

// A db with a finished run of the profile prices the dry run at what that run measured (tuner/sweep_cost.hpp).
TEST(SweepCli, DryRunPricesThePlanAtTheRatesADbsRunsOfTheProfileMeasured) {
  test::ScratchDir dir;
  const std::string db_path = dir.path("t.db");
  {
    TuningDb db(db_path);
    const std::int64_t run = db.begin_run(test::test_run(test::test_device(), "quick"));
    const GemmProblem p = test::test_problem(256, 256, 256);
    db.store_problem(run, p, {test::lt_record(p, 1, 9.0), test::own_record(p, "v", 12.0)});
    db.finish_run(run);
  }
  auto r = run_gemmtune({"sweep", "--profile", "quick", "--dry-run", "--shards", "2", "--db", db_path});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("rates measured by 1 run of 'quick' (1 problem,"), std::string::npos) << r.output;
  r = run_gemmtune({"sweep", "--profile", "ci", "--dry-run", "--shards", "2", "--db", db_path});
  EXPECT_NE(r.output.find("no finished run of profile 'ci'"), std::string::npos) << r.output;
  r = run_gemmtune({"sweep", "--profile", "quick", "--dry-run", "--shards", "2", "--db", db_path, "--no-prune"});
  EXPECT_NE(r.output.find("; no pruning)"), std::string::npos) << r.output;
  // A db it cannot read leaves the built-in rates, and says why.
  test::write_bytes(dir.path("junk.db"), "not a database");
  r = run_gemmtune({"sweep", "--profile", "quick", "--dry-run", "--shards", "2", "--db", dir.path("junk.db")});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("built-in rates of an H200 ("), std::string::npos) << r.output;
  // A dry run never creates a db.
  r = run_gemmtune({"sweep", "--profile", "quick", "--dry-run", "--db", dir.path("none.db")});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir.path("none.db")));
}

TEST(SweepCli, BadShardsExitTwoWithAClearLine) {
  auto r = run_gemmtune({"sweep", "--profile", "quick", "--dry-run", "--shard", "4/4"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--shard '4/4': I must be below N"), std::string::npos) << r.output;
  // No scheduler variables: run_gemmtune passes this process's environment, which a test run has none of.
  if (!std::getenv("SLURM_ARRAY_TASK_ID") && !std::getenv("JOB_COMPLETION_INDEX")) {
    r = run_gemmtune({"sweep", "--profile", "quick", "--dry-run", "--shard", "auto"});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("no scheduler index found"), std::string::npos) << r.output;
  }
  EXPECT_EQ(run_gemmtune({"sweep", "--profile", "quick", "--dry-run", "--shard", "1/2", "--shards", "3"}).exit_code, 2);
  EXPECT_EQ(run_gemmtune({"sweep", "--profile", "quick", "--shards", "3", "--no-db"}).exit_code, 2);
  EXPECT_EQ(run_gemmtune({"sweep", "--profile", "quick", "--shard", "0/2", "--devices", "all"}).exit_code, 2);
  EXPECT_EQ(run_gemmtune({"sweep", "--profile", "quick", "--devices", "all", "--metrics"}).exit_code, 2);
  EXPECT_EQ(run_gemmtune({"sweep", "--profile", "quick", "--devices", "all", "--device", "1"}).exit_code, 2);
}

TEST(SweepCli, AShardBeyondThePlanSweepsNothingAndSaysSo) {
  const auto r = run_gemmtune({"sweep", "--profile", "quick", "--shard", "9/10", "--no-db"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("has no problems"), std::string::npos) << r.output;
}

// What a runtime given no db recorded is what `sweep --from-misses` given no --db plans: both use the default db.
TEST(SweepCli, FromMissesWithoutDbPlansTheDefaultDbsMisses) {
  const test::ScratchDir dir;
  test::ScopedEnv env;
  env.unset("GEMMTUNE_DB").set("XDG_CACHE_HOME", dir.path("cache"));
  const std::string key = test::test_device().key();
  const GemmProblem p = test::test_problem(300, 200, 100);
  std::filesystem::create_directories(dir.path("cache/gemmtune"));
  TuningDb(dir.path("cache/gemmtune/gemmtune.db")).record_misses(key, {p.key()});
  const auto r = run_gemmtune({"sweep", "--from-misses", "--device-key", key, "--dry-run"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[1/1] " + p.key()), std::string::npos) << r.output;
}

TEST(SweepCli, WithoutAGpuDevicesAllExitsThree) {
  const auto r = test::run_gemmtune_with_no_gpu_visible({"sweep", "--profile", "quick", "--devices", "all", "--no-db"});
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("no usable CUDA GPU"), std::string::npos) << r.output;
}

TEST(SweepCli, WithoutAGpuARealSweepExitsThree) {
  const auto r = test::run_gemmtune_with_no_gpu_visible({"sweep", "--profile", "quick", "--no-db"});
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("no usable CUDA GPU"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace gemmtune
