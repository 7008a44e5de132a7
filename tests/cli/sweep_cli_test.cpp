#include <gtest/gtest.h>

#include "support/run_gemmtune.hpp"
#include "support/scratch_dir.hpp"

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

TEST(SweepCli, ModeFilterKeepsOnlyThatMode) {
  const auto r = run_gemmtune({"sweep", "--profile", "quick", "--dry-run", "--modes", "fp32"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find(":tf32\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(":fp32\n"), std::string::npos) << r.output;
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

TEST(SweepCli, WithoutAGpuARealSweepExitsThree) {
  const auto r = run_gemmtune({"sweep", "--profile", "quick", "--no-db"});
  if (r.exit_code == 0) GTEST_SKIP() << "this machine has a GPU";
  EXPECT_EQ(r.exit_code, 3) << r.output;
}

}  // namespace
}  // namespace gemmtune
