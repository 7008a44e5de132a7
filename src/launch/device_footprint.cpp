#include "launch/device_footprint.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

#include <cuda_runtime_api.h>

#include "common/error.hpp"
#include "cuda/cuda_call.hpp"
#include "launch/problem_buffers.hpp"

namespace gemmtune {
namespace {

constexpr std::uint64_t kSaturated = std::numeric_limits<std::uint64_t>::max();

std::uint64_t mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? kSaturated : out;
}

std::uint64_t add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? kSaturated : out;
}

std::uint64_t elements(std::int64_t rows, std::int64_t cols) {
  return mul(static_cast<std::uint64_t>(std::max<std::int64_t>(rows, 0)),
             static_cast<std::uint64_t>(std::max<std::int64_t>(cols, 0)));
}

}  // namespace

int input_set_count(const GemmProblem& gemm, std::size_t l2_bytes) {
  const std::uint64_t set_bytes =
      mul(add(add(elements(gemm.m, gemm.k), elements(gemm.k, gemm.n)), gemm.epi.bias ? elements(gemm.n, 1) : 0),
          sizeof(float));
  const std::uint64_t want = mul(2, l2_bytes) / std::max<std::uint64_t>(set_bytes, 1) + 1;
  return static_cast<int>(std::clamp<std::uint64_t>(want, 1, ProblemBuffers::kMaxSets));
}

std::uint64_t verify_and_time_bytes(const GemmProblem& gemm, int input_sets, std::size_t workspace_bytes) {
  const std::uint64_t per_set = mul(
      add(add(elements(gemm.m, gemm.k), elements(gemm.k, gemm.n)), gemm.epi.bias ? elements(gemm.n, 1) : 0),
      sizeof(float));
  const std::uint64_t outputs = gemm.epi.save_z ? 2 : 1;  // Y, and Z when the epilogue saves it
  const std::uint64_t y = elements(gemm.m, gemm.n);
  std::uint64_t total = mul(per_set, static_cast<std::uint64_t>(std::max(input_sets, 1)));
  total = add(total, mul(mul(y, outputs), sizeof(float)));   // Y (and Z)
  total = add(total, mul(mul(y, outputs), sizeof(double)));  // the fp64 reference of each
  return add(total, workspace_bytes);
}

std::uint64_t backward_gradient_bytes(const GemmProblem& forward) {
  std::uint64_t count = add(add(elements(forward.m, forward.n), elements(forward.m, forward.k)),
                            elements(forward.k, forward.n));
  if (forward.epi.bias) count = add(count, elements(forward.n, 1));
  return mul(count, sizeof(float));
}

std::string describe_bytes(std::uint64_t bytes) {
  char text[96];
  std::snprintf(text, sizeof(text), "%.2f GiB (%llu bytes)", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0),
                static_cast<unsigned long long>(bytes));
  return text;
}

void require_device_memory(std::uint64_t needed_bytes, const std::string& what) {
  std::size_t free_bytes = 0, total_bytes = 0;
  GT_CUDA_CALL(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (needed_bytes <= free_bytes) return;
  int device = 0;
  GT_CUDA_CALL(cudaGetDevice(&device));
  throw InputError(what + " needs " + describe_bytes(needed_bytes) + " of GPU memory, but only " +
                   describe_bytes(free_bytes) + " are free on device " + std::to_string(device) + " (of " +
                   describe_bytes(total_bytes) + ")");
}

}  // namespace gemmtune
