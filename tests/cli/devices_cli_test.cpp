// The CLI's exit-code contract as CI sees it: 3 for no GPU, 2 for bad usage, 0 for --version.
#include <gtest/gtest.h>

#include "support/gpu_test.hpp"
#include "support/run_gemmtune.hpp"

namespace gemmtune {
namespace {

using test::run_gemmtune;

TEST(DevicesCli, WithoutAGpuExitsThreeWithOneClearLine) {
  const auto r = test::run_gemmtune_with_no_gpu_visible({"devices"});
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("no usable CUDA GPU"), std::string::npos) << r.output;
}

TEST(DevicesCli, WithAGpuPrintsItsDeviceKey) {
  GT_REQUIRE_GPU();
  const auto r = run_gemmtune({"devices", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"key\""), std::string::npos) << r.output;
}

TEST(Cli, VersionExitsZero) {
  const auto r = run_gemmtune({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("gemmtune "), std::string::npos);
}

TEST(Cli, UnknownSubcommandOrOptionExitsTwo) {
  EXPECT_EQ(run_gemmtune({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(run_gemmtune({"sweep", "--profile", "quick", "--no-such-flag"}).exit_code, 2);
  EXPECT_EQ(run_gemmtune({}).exit_code, 2);
}

}  // namespace
}  // namespace gemmtune
