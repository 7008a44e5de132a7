// BlockingKernel: holds a stream until the host has queued a whole batch of timed calls (nvbench's
// blocking_kernel), so the calls run back to back on the GPU and host launch latency stays out of the times.
//
// Nothing that may wait for the GPU can be queued behind it: an allocation, a free, a synchronization, or the first
// launch of a kernel under CUDA's lazy module loading (loading a module may wait for the GPU to go idle). The host
// would wait for the blocking kernel while the blocking kernel waits for the host, until its timeout: that was the
// 10 s first call of issue 37. Launch every kernel of a batch once, and wait for it, before blocking.
#pragma once

#include <cuda_runtime_api.h>

namespace gemmtune {

class BlockingKernel {
 public:
  BlockingKernel();
  ~BlockingKernel();
  BlockingKernel(const BlockingKernel&) = delete;
  BlockingKernel& operator=(const BlockingKernel&) = delete;

  // Enqueues a one-thread kernel that spins until release() (or a 10 s timeout, so a dead host cannot hang the GPU).
  void block(cudaStream_t s);
  void release();
  // Whether the last block() ended by its timeout instead of release(): then the host was late queueing the batch
  // (something behind the kernel waited for the GPU), and the batch's times are wrong. Valid once the stream has
  // been synchronized past the blocking kernel.
  bool timed_out() const;

  static constexpr unsigned long long kTimeoutNs = 10'000'000'000ull;

 private:
  // Pinned and mapped, read and written over PCIe: [0] the release flag, [1] set by the kernel when it timed out.
  volatile int* host_flags_ = nullptr;
  int* device_flags_ = nullptr;
  bool blocked_ = false;
};

}  // namespace gemmtune
