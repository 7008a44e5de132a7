// `gemmtune devices` as CI sees it: 3 for no GPU, with one line that says so.
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

}  // namespace
}  // namespace gemmtune
