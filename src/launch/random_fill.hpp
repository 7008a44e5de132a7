// Device-side fills: fresh uniform random inputs for every check, and NaN poison for outputs.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace gemmtune {

// Uniform in [lo, hi) from a counter-based hash of (seed, index): reproducible for a seed, fresh for a new one.
void fill_uniform(float* p, std::size_t count, std::uint64_t seed, float lo, float hi, cudaStream_t s);
// ±2^U(−max_exponent, max_exponent), random sign: magnitudes over a range where alignment inside a sum matters.
void fill_wide_exponent(float* p, std::size_t count, std::uint64_t seed, float max_exponent, cudaStream_t s);
// Sets every element to quiet NaN, so an element a kernel forgot to write fails verification.
void fill_nan(float* p, std::size_t count, cudaStream_t s);

}  // namespace gemmtune
