#include "kernels/operand_staging.hpp"

#include <algorithm>

#include "cuda/cuda_call.hpp"
#include "kernels/padded_copy.hpp"

namespace gemmtune::kernels {
namespace {

// dst (rows × cols, row stride ld_dst, a multiple of 4 on a 16-byte base) = src (any row stride). Each thread
// writes 4 consecutive floats of a row as one 16-byte store (past cols: zeros, inside the copy's row padding) from 4
// scalar loads, which a warp's lanes still read as one contiguous 512-byte run.
__global__ void copy_rows_kernel(const float* __restrict__ src, std::int64_t ld_src, float* __restrict__ dst,
                                 std::int64_t ld_dst, std::int64_t rows, std::int64_t cols) {
  const std::int64_t quads = (cols + 3) / 4, total = rows * quads;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t r = i / quads, c = i % quads * 4;
    const float* row = src + r * ld_src;
    float4 v;
    v.x = row[c];
    v.y = c + 1 < cols ? row[c + 1] : 0.f;
    v.z = c + 2 < cols ? row[c + 2] : 0.f;
    v.w = c + 3 < cols ? row[c + 3] : 0.f;
    *reinterpret_cast<float4*>(dst + r * ld_dst + c) = v;
  }
}

}  // namespace

void stage_operands(OperandView& a, OperandView& b, const LaunchScratch& scratch, cudaStream_t s) {
  std::size_t used = 0;
  for (OperandView* v : {&a, &b}) {
    const std::size_t floats = staged_copy_floats(*v);
    if (floats == 0 || !scratch.staging || used + floats > scratch.staging_floats) continue;
    const std::int64_t rows = v->k_major ? v->rows : v->k, cols = v->k_major ? v->k : v->rows;
    const std::int64_t ld = (cols + 3) / 4 * 4;
    float* copy = scratch.staging + used;
    copy_rows_padded(v->ptr, v->ld, copy, ld, rows, cols, s);
    v->ptr = copy;
    v->ld = ld;
    v->vec4 = v->vec2 = true;
    used += staging_boundary(floats);
  }
}

void copy_rows_padded(const float* src, std::int64_t ld_src, float* dst, std::int64_t ld_dst, std::int64_t rows,
                      std::int64_t cols, cudaStream_t s) {
  // Enough blocks to keep every SM's loads in flight, each thread then looping over a few 16-byte stores.
  constexpr int kThreads = 256;
  const std::int64_t quads = rows * (ld_dst / 4);
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((quads + kThreads - 1) / kThreads, 2048));
  copy_rows_kernel<<<blocks, kThreads, 0, s>>>(src, ld_src, dst, ld_dst, rows, cols);
  GT_CUDA_CHECK_LAUNCH();
}

}  // namespace gemmtune::kernels
