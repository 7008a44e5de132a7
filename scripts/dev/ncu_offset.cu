// ncu_offset: how much ncu's gpu__time_duration adds to a kernel whose length does not depend on the SM clock.
//
// The kernel spins on %globaltimer (wall-clock nanoseconds) for a fixed time, so its duration is the same at any
// clock. Run plainly, it prints CUPTI's median per length (the sweep's timer, calls back to back behind the blocking
// kernel, as the sweep times them). Run under ncu (CUPTI is then ncu's, so the timer cannot start), it only launches
// the same calls, and ncu's gpu__time_duration.sum of them is compared with the first run's medians
// (scripts/dev/ncu_offset.sh does both). The difference is what ncu's measurement adds per kernel, independent of
// clock: ncu − CUPTI on a GEMM minus this is what is left for the clock and everything else.
//
//   ncu_offset            one line per spin length: spin_ns cupti_median_us
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "common/error.hpp"
#include "cuda/cuda_call.hpp"
#include "cuda/stream.hpp"
#include "cupti/cupti_kernel_timer.hpp"
#include "launch/blocking_kernel.hpp"
#include "globaltimer_spin.cuh"

namespace gemmtune {
namespace {

constexpr int kCalls = 30;
constexpr int kBlocks = 132;  // one per H100 SM: a full-GPU launch, like a GEMM's
constexpr std::int64_t kSpinNs[] = {2000, 5000, 15000, 50000, 300000};

int run() {
  const CudaStream stream;
  const cudaStream_t s = stream.get();
  int* sink = nullptr;
  GT_CUDA_CALL(cudaMalloc(&sink, sizeof(int)));
  BlockingKernel blocker;
  bool have_cupti = true;
  try {
    CuptiKernelTimer probe;
  } catch (const Error&) {
    have_cupti = false;  // under ncu: only launch, ncu measures
  }
  for (const std::int64_t ns : kSpinNs) {
    for (int i = 0; i < 5; ++i) spin_kernel<<<kBlocks, 32, 0, s>>>(ns, sink);
    GT_CUDA_CHECK_LAUNCH();
    GT_CUDA_CALL(cudaStreamSynchronize(s));
    if (!have_cupti) {
      for (int i = 0; i < kCalls; ++i) spin_kernel<<<kBlocks, 32, 0, s>>>(ns, sink);
      GT_CUDA_CALL(cudaStreamSynchronize(s));
      continue;
    }
    CuptiKernelTimer timer;
    blocker.block(s);
    for (int i = 0; i < kCalls; ++i) {
      timer.begin_call();
      spin_kernel<<<kBlocks, 32, 0, s>>>(ns, sink);
      timer.end_call();
    }
    blocker.release();
    GT_CUDA_CALL(cudaStreamSynchronize(s));
    std::vector<double> us = timer.collect();
    std::sort(us.begin(), us.end());
    std::printf("%lld %.3f\n", static_cast<long long>(ns), us[us.size() / 2]);
  }
  GT_CUDA_CALL(cudaFree(sink));
  return 0;
}

}  // namespace
}  // namespace gemmtune

int main() {
  try {
    return gemmtune::run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ncu_offset: %s\n", e.what());
    return 1;
  }
}
