#include "tuner/sm_clock.hpp"

#include <cstdint>

#include "cuda/cuda_call.hpp"
#include "cuda/device_buffer.hpp"

namespace gemmtune {
namespace {

__global__ void count_cycles(std::uint64_t duration_ns, unsigned long long* out) {
  std::uint64_t t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  const long long c0 = clock64();
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  } while (t1 - t0 < duration_ns);
  const long long c1 = clock64();
  out[0] = static_cast<unsigned long long>(c1 - c0);
  out[1] = t1 - t0;
}

}  // namespace

double measure_sm_clock_mhz(cudaStream_t s, unsigned duration_us) {
  DeviceBuffer<unsigned long long> out(2);
  count_cycles<<<1, 1, 0, s>>>(std::uint64_t{duration_us} * 1000, out.get());
  GT_CUDA_CHECK_LAUNCH();
  unsigned long long host[2] = {0, 0};
  GT_CUDA_CALL(cudaMemcpyAsync(host, out.get(), sizeof(host), cudaMemcpyDeviceToHost, s));
  GT_CUDA_CALL(cudaStreamSynchronize(s));
  return host[1] ? static_cast<double>(host[0]) / (static_cast<double>(host[1]) * 1e-3) : 0.0;
}

}  // namespace gemmtune
