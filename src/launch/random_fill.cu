#include "launch/random_fill.hpp"

#include <cmath>

#include "cuda/cuda_call.hpp"

namespace gemmtune {
namespace {

// splitmix64: a full-avalanche 64-bit mix; plenty for test data, and stateless per element.
__device__ std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__global__ void fill_uniform_kernel(float* p, std::size_t count, std::uint64_t seed, float lo, float hi) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const float u = static_cast<float>(mix(seed ^ mix(i)) >> 40) * (1.0f / 16777216.0f);  // 24 bits in [0, 1)
    p[i] = lo + (hi - lo) * u;
  }
}

__global__ void fill_wide_exponent_kernel(float* p, std::size_t count, std::uint64_t seed, float max_exponent) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const std::uint64_t r = mix(seed ^ mix(i));
    const float u = static_cast<float>(r >> 40) * (1.0f / 16777216.0f);  // 24 bits in [0, 1)
    const float magnitude = exp2f(max_exponent * (2.0f * u - 1.0f));
    p[i] = (r & 1u) ? -magnitude : magnitude;  // the sign from a bit the exponent does not use
  }
}

__global__ void fill_value_kernel(float* p, std::size_t count, float v) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x)
    p[i] = v;
}

unsigned grid_for(std::size_t count) {
  const std::size_t blocks = (count + 255) / 256;
  return static_cast<unsigned>(blocks < 4096 ? (blocks ? blocks : 1) : 4096);
}

}  // namespace

void fill_uniform(float* p, std::size_t count, std::uint64_t seed, float lo, float hi, cudaStream_t s) {
  if (count == 0) return;
  fill_uniform_kernel<<<grid_for(count), 256, 0, s>>>(p, count, seed, lo, hi);
  GT_CUDA_CHECK_LAUNCH();
}

void fill_wide_exponent(float* p, std::size_t count, std::uint64_t seed, float max_exponent, cudaStream_t s) {
  if (count == 0) return;
  fill_wide_exponent_kernel<<<grid_for(count), 256, 0, s>>>(p, count, seed, max_exponent);
  GT_CUDA_CHECK_LAUNCH();
}

void fill_nan(float* p, std::size_t count, cudaStream_t s) {
  if (count == 0) return;
  fill_value_kernel<<<grid_for(count), 256, 0, s>>>(p, count, NAN);
  GT_CUDA_CHECK_LAUNCH();
}

}  // namespace gemmtune
