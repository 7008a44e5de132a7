// CallGraphs on a GPU with a plan of one kernel, launched plainly or as a programmatic dependent launch (as the runtime
// launches our wgmma kernels): the same call again, queued behind work, replays in the first case and is launched in
// the second, where a replay would lose the overlap with the call before it.
#include "runtime/call_graphs.hpp"

#include <gtest/gtest.h>

#include "cuda/cuda_call.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/stream.hpp"
#include "kernels/kernel_launch.hpp"
#include "kernels/ptx.cuh"
#include "launch/blocking_kernel.hpp"
#include "support/gpu_test.hpp"

namespace gemmtune::runtime {
namespace {

// Outlasts a launch's host time many times over, so a launch behind queued work keeps the host ahead.
constexpr unsigned long long kSpinNs = 200'000;

__global__ void spin_then_increment(float* y, unsigned long long spin_ns) {
  kernels::ptx::wait_for_previous_grid();  // launched behind the call before, it reads that call's y
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < spin_ns);
  *y += 1.f;
}

struct Counts {
  std::size_t graphs, replays, launches_ahead;
  std::optional<bool> overlapping;
  float y;
};

// Six calls on a drained stream (a first sight, a capture, four sampled replays), then three queued behind a
// blocking kernel: the same call each time.
Counts run_the_same_call(bool programmatic) {
  DeviceBuffer<float> y(1);
  GT_CUDA_CALL(cudaMemset(y.get(), 0, sizeof(float)));
  const CudaStream s, capture_on;
  CallGraphs graphs;
  ExactCall call;
  call.x.Y = y.get();
  call.stream = s.get();
  const auto launch = [&](cudaStream_t on) {
    const kernels::KernelLaunch l(dim3(1), dim3(1), 1, 0, on, programmatic);
    GT_CUDA_CALL(cudaLaunchKernelEx(&l.config, spin_then_increment, y.get(), kSpinNs));
  };
  for (int i = 0; i < 6; ++i) {
    graphs.run(call, capture_on.get(), launch);
    s.synchronize();
  }
  BlockingKernel blocker;
  blocker.block(s.get());
  for (int i = 0; i < 3; ++i) graphs.run(call, capture_on.get(), launch);
  blocker.release();
  s.synchronize();
  EXPECT_FALSE(blocker.timed_out()) << "a call waited for the GPU behind the blocking kernel";
  Counts c{graphs.graphs(), graphs.replays(), graphs.launches_ahead(), graphs.overlapping_launches(), 0.f};
  GT_CUDA_CALL(cudaMemcpy(&c.y, y.get(), sizeof(float), cudaMemcpyDeviceToHost));
  return c;
}

TEST(CallGraphsGpu, ThePlainSameCallAgainBehindQueuedWorkReplays) {
  GT_REQUIRE_GPU();
  const Counts c = run_the_same_call(false);
  EXPECT_EQ(c.y, 9.f) << "every call ran once";
  EXPECT_EQ(c.graphs, 1u);
  EXPECT_EQ(c.overlapping, std::optional<bool>(false));
  EXPECT_EQ(c.replays, 8u) << "captured at the second sight, replayed from then on";
  EXPECT_EQ(c.launches_ahead, 0u);
}

TEST(CallGraphsGpu, TheSameCallAgainBehindQueuedWorkLaunchesWhereItsLaunchesOverlap) {
  GT_REQUIRE_GPU();
  int device = 0, major = 0;
  GT_CUDA_CALL(cudaGetDevice(&device));
  GT_CUDA_CALL(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 9)
    GT_SKIP_GPU_TEST() << "programmatic dependent launch needs compute capability 9.0, this GPU is " << major;
  const Counts c = run_the_same_call(true);
  EXPECT_EQ(c.y, 9.f) << "every call ran once";
  EXPECT_EQ(c.graphs, 1u);
  EXPECT_EQ(c.overlapping, std::optional<bool>(true)) << "two calls captured together hold a programmatic edge";
  EXPECT_EQ(c.replays, 5u) << "the drained stream's calls still replay";
  EXPECT_EQ(c.launches_ahead, 3u) << "behind queued work the call is launched, keeping its overlap";
}

}  // namespace
}  // namespace gemmtune::runtime
