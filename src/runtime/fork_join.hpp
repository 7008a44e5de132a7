// ForkJoin: runs work on a second stream inside the order of a first one, with two events: fork() makes the side
// stream wait for everything enqueued on the main stream so far, join() makes the main stream wait for the side's
// work. Both are stream-ordered (no host synchronization) and are captured into a CUDA graph as two edges.
#pragma once

#include <utility>

#include "cuda/cuda_call.hpp"

namespace gemmtune::runtime {

class ForkJoin {
 public:
  ForkJoin() {
    GT_CUDA_CALL(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    GT_CUDA_CALL(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
  }
  ~ForkJoin() {
    cudaEventDestroy(fork_);
    cudaEventDestroy(join_);
  }
  ForkJoin(const ForkJoin&) = delete;
  ForkJoin& operator=(const ForkJoin&) = delete;

  void fork(cudaStream_t main, cudaStream_t side) const {
    GT_CUDA_CALL(cudaEventRecord(fork_, main));
    GT_CUDA_CALL(cudaStreamWaitEvent(side, fork_, 0));
  }
  void join(cudaStream_t main, cudaStream_t side) const {
    GT_CUDA_CALL(cudaEventRecord(join_, side));
    GT_CUDA_CALL(cudaStreamWaitEvent(main, join_, 0));
  }

 private:
  cudaEvent_t fork_ = nullptr, join_ = nullptr;
};

}  // namespace gemmtune::runtime
