#include "launch/blocking_kernel.hpp"

#include <cstdint>

#include "cuda/cuda_call.hpp"

namespace gemmtune {
namespace {

__global__ void spin_until_released(const volatile int* flag, std::uint64_t timeout_ns) {
  std::uint64_t start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  while (*flag == 0) {
    std::uint64_t now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > timeout_ns) break;
  }
}

}  // namespace

BlockingKernel::BlockingKernel() {
  void* host = nullptr;
  GT_CUDA_CALL(cudaHostAlloc(&host, sizeof(int), cudaHostAllocMapped));
  host_flag_ = static_cast<volatile int*>(host);
  *host_flag_ = 1;
  GT_CUDA_CALL(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flag_), host, 0));
}

BlockingKernel::~BlockingKernel() {
  if (host_flag_) {
    *host_flag_ = 1;  // never leave a queued kernel spinning on freed memory
    cudaDeviceSynchronize();
    cudaFreeHost(const_cast<int*>(host_flag_));
  }
}

void BlockingKernel::block(cudaStream_t s) {
  *host_flag_ = 0;
  blocked_ = true;
  spin_until_released<<<1, 1, 0, s>>>(device_flag_, 10'000'000'000ull);
  GT_CUDA_CHECK_LAUNCH();
}

void BlockingKernel::release() {
  if (!blocked_) return;
  __atomic_store_n(const_cast<int*>(host_flag_), 1, __ATOMIC_SEQ_CST);
  blocked_ = false;
}

}  // namespace gemmtune
