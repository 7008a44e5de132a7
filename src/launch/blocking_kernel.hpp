// BlockingKernel: holds a stream until the host has queued a whole batch of timed calls (nvbench's
// blocking_kernel), so the calls run back to back on the GPU and host launch latency stays out of the times.
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

 private:
  volatile int* host_flag_ = nullptr;  // pinned, mapped: the kernel reads it over PCIe
  int* device_flag_ = nullptr;
  bool blocked_ = false;
};

}  // namespace gemmtune
