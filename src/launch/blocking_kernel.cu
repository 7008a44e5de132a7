#include "launch/blocking_kernel.hpp"

#include <cstdint>

#include "cuda/cuda_call.hpp"

namespace gemmtune {
namespace {

__global__ void spin_until_released(volatile int* flags, std::uint64_t timeout_ns) {
  std::uint64_t start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  while (flags[0] == 0) {
    std::uint64_t now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > timeout_ns) {
      flags[1] = 1;
      return;
    }
  }
}

}  // namespace

BlockingKernel::BlockingKernel() {
  void* host = nullptr;
  GT_CUDA_CALL(cudaHostAlloc(&host, 2 * sizeof(int), cudaHostAllocMapped));
  host_flags_ = static_cast<volatile int*>(host);
  host_flags_[0] = 1;
  host_flags_[1] = 0;
  GT_CUDA_CALL(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flags_), host, 0));
}

BlockingKernel::~BlockingKernel() {
  if (host_flags_) {
    host_flags_[0] = 1;  // never leave a queued kernel spinning on freed memory
    cudaDeviceSynchronize();
    cudaFreeHost(const_cast<int*>(host_flags_));
  }
}

void BlockingKernel::block(cudaStream_t s) {
  host_flags_[0] = 0;
  host_flags_[1] = 0;
  blocked_ = true;
  spin_until_released<<<1, 1, 0, s>>>(device_flags_, kTimeoutNs);
  GT_CUDA_CHECK_LAUNCH();
}

void BlockingKernel::release() {
  if (!blocked_) return;
  __atomic_store_n(const_cast<int*>(host_flags_), 1, __ATOMIC_SEQ_CST);
  blocked_ = false;
}

bool BlockingKernel::timed_out() const { return host_flags_[1] != 0; }

}  // namespace gemmtune
