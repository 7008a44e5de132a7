#include "cupti/cupti_kernel_timer.hpp"

#include <gtest/gtest.h>

#include "cuda/stream.hpp"
#include "support/gpu_test.hpp"
#include "tuner/test_slowdown.hpp"

namespace gemmtune {
namespace {

TEST(CuptiKernelTimer, ReturnsTheKernelTimeOfAKnownKernel) {
  GT_REQUIRE_GPU();
  CudaStream s;
  CuptiKernelTimer timer;
  for (int i = 0; i < 5; ++i) {
    timer.begin_call();
    launch_spin_ns(200'000, s.get());  // a kernel that runs 200 us by the GPU's global timer
    timer.end_call();
  }
  s.synchronize();
  const std::vector<double> us = timer.collect();
  ASSERT_EQ(us.size(), 5u);
  for (double t : us) {
    EXPECT_GE(t, 200.0);
    EXPECT_LT(t, 206.0) << "spin kernels stop within a few microseconds of their deadline";
  }
}

TEST(CuptiKernelTimer, ACallSpansAllItsKernelsAndIgnoresKernelsOutsideCalls) {
  GT_REQUIRE_GPU();
  CudaStream s;
  CuptiKernelTimer timer;
  launch_spin_ns(300'000, s.get());  // outside any call: must not count
  timer.begin_call();
  launch_spin_ns(50'000, s.get());
  launch_spin_ns(50'000, s.get());  // a call that launches two kernels, like split-k or GEMM + epilogue
  timer.end_call();
  s.synchronize();
  const std::vector<double> us = timer.collect();
  ASSERT_EQ(us.size(), 1u);
  EXPECT_GE(us[0], 100.0);
  EXPECT_LT(us[0], 130.0);
}

TEST(CuptiKernelTimer, ACallWithoutKernelsIsAnError) {
  GT_REQUIRE_GPU();
  CuptiKernelTimer timer;
  timer.begin_call();
  timer.end_call();
  EXPECT_THROW(timer.collect(), CheckError);
}

TEST(CuptiKernelTimer, OnlyOneTimerAtATime) {
  GT_REQUIRE_GPU();
  CuptiKernelTimer timer;
  EXPECT_THROW(CuptiKernelTimer second, CheckError);
}

}  // namespace
}  // namespace gemmtune
