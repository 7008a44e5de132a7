// A kernel whose length is wall-clock time, not SM cycles: it spins on %globaltimer (nanoseconds), so it takes the same
// time at any clock, and what is measured around it beyond its length is launch and measurement overhead alone.
// For the one-file dev tools: the kernel is defined here, once per binary.
#pragma once

#include <cstdint>

namespace gemmtune {

__device__ inline std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(std::int64_t ns, int* sink) {
  const std::uint64_t start = global_ns();
  int n = 0;
  while (global_ns() - start < static_cast<std::uint64_t>(ns)) ++n;
  if (n == -1) *sink = n;  // keeps the loop; never true
}

}  // namespace gemmtune
