// GT_REQUIRE_GPU(): a GPU test's first statement. It runs the test where this machine has a usable CUDA GPU, skips it
// where there is none (no device, no NVIDIA driver), and fails it where a GPU is there that CUDA cannot use (a driver
// older than the runtime, say): a skip there would let a broken GPU machine pass. Either way it names the reason.
// GT_SKIP_GPU_TEST() << why: how a GPU test skips for any other reason (no ncu, a GPU without the feature).
// With GEMMTUNE_REQUIRE_GPU=1 (the GPU machine's runs, a GPU CI job) every such skip fails instead, so a run on a GPU
// machine cannot pass by skipping.
#pragma once

#include <string>

#include <gtest/gtest.h>

namespace gemmtune::test {

// Why a GPU test cannot run here; an empty reason when a GPU is usable. `broken`: a GPU is there that CUDA cannot use.
struct GpuTestBlocker {
  std::string reason;
  bool broken = false;
};
GpuTestBlocker gpu_test_blocker();
// Empty when a GPU is usable; otherwise why not, as `gemmtune devices` says it.
std::string gpu_unavailable_reason();
// GEMMTUNE_REQUIRE_GPU is set to anything but 0: a GPU test that would skip fails.
bool gpu_test_skips_fail();
// The first line of a GPU test's skip message, which says when it is a failure instead.
const char* gpu_test_skip_heading();

}  // namespace gemmtune::test

#define GT_SKIP_GPU_TEST()                                                                                \
  return GTEST_MESSAGE_(::gemmtune::test::gpu_test_skip_heading(),                                        \
                        ::gemmtune::test::gpu_test_skips_fail() ? ::testing::TestPartResult::kFatalFailure \
                                                                : ::testing::TestPartResult::kSkip)

#define GT_REQUIRE_GPU()                                                                        \
  do {                                                                                          \
    const ::gemmtune::test::GpuTestBlocker gt_blocker_ = ::gemmtune::test::gpu_test_blocker();  \
    if (gt_blocker_.broken) GTEST_FAIL() << "this GPU test cannot run: " << gt_blocker_.reason; \
    if (!gt_blocker_.reason.empty()) GT_SKIP_GPU_TEST() << gt_blocker_.reason;                  \
  } while (0)
