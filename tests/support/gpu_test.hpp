// GT_REQUIRE_GPU(): skips the current test, with the reason, when this machine has no usable CUDA GPU.
#pragma once

#include <string>

#include <gtest/gtest.h>

namespace gemmtune::test {
// Empty when a GPU is usable; otherwise why not (the CUDA error text).
std::string gpu_unavailable_reason();
}  // namespace gemmtune::test

#define GT_REQUIRE_GPU()                                                                   \
  do {                                                                                     \
    const std::string gt_reason_ = ::gemmtune::test::gpu_unavailable_reason();             \
    if (!gt_reason_.empty()) GTEST_SKIP() << "GPU test skipped: " << gt_reason_;           \
  } while (0)
