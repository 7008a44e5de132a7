#include "kernels/operand_staging.hpp"

#include <algorithm>
#include <string>

#include "common/error.hpp"
#include "cuda/cuda_call.hpp"
#include "kernels/kernel_launch.hpp"
#include "kernels/padded_copy.hpp"
#include "kernels/ptx.cuh"
#include "kernels/staged_b.hpp"

namespace gemmtune::kernels {
namespace {

// dst (rows × cols, row stride ld_dst, a multiple of 4 on a 16-byte base) = src (any row stride). Each thread
// writes 4 consecutive floats of a row as one 16-byte store (past cols: zeros, inside the copy's row padding) from 4
// scalar loads, which a warp's lanes still read as one contiguous 512-byte run. Two copies share the grid: the flat
// index runs over the first's quads, then the second's.
__device__ void copy_quad(const PaddedCopy& c, std::int64_t i) {
  const std::int64_t quads = (c.cols + 3) / 4;
  const std::int64_t r = i / quads, col = i % quads * 4;
  const float* row = c.src + r * c.ld_src;
  float4 v;
  v.x = row[col];
  v.y = col + 1 < c.cols ? row[col + 1] : 0.f;
  v.z = col + 2 < c.cols ? row[col + 2] : 0.f;
  v.w = col + 3 < c.cols ? row[col + 3] : 0.f;
  *reinterpret_cast<float4*>(c.dst + r * c.ld_dst + col) = v;
}

__global__ void copy_rows_kernel(const PaddedCopy first, const PaddedCopy second) {
  ptx::let_next_grid_start();  // a staged variant's GEMM, launched behind the copy, waits for it itself
  ptx::wait_for_previous_grid();  // launched behind the call before, the copy reads what it wrote
  const std::int64_t first_total = first.rows * ((first.cols + 3) / 4);
  const std::int64_t total = first_total + second.rows * ((second.cols + 3) / 4);
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    if (i < first_total)
      copy_quad(first, i);
    else
      copy_quad(second, i - first_total);
  }
}

// dst (rows × ld_dst, K-major, columns k … ld_dst − 1 zero) = src stored MN-major (element (r, kk) at kk·ld_src + r).
struct TransposedCopy {
  const float* src = nullptr;
  std::int64_t ld_src = 0;
  float* dst = nullptr;
  std::int64_t ld_dst = 0, rows = 0, k = 0;
};

// A block moves a tile of 32 rows (r) × 64 of k; its 32 × 8 threads have 8 loads in flight each, and each warp stores
// 64 consecutive floats of a row (256 bytes, the copy's rows being only 16-byte aligned).
constexpr int kTransposeRows = 32, kTransposeK = 64, kTransposeLanesY = 8;

// Through shared memory so that both sides are warp-contiguous: a warp loads 32 consecutive r of one kk and stores
// consecutive kk of one r. The 33-float rows put a column's 32 floats in 32 banks. One block per tile along r
// (blockIdx.x), the tiles along k strided over blockIdx.y (a grid has at most 65535 of those).
__global__ void transpose_to_k_major_kernel(const TransposedCopy c) {
  ptx::let_next_grid_start();
  __shared__ float tile[kTransposeK][kTransposeRows + 1];
  const std::int64_t r0 = std::int64_t{blockIdx.x} * kTransposeRows;
  for (std::int64_t k0 = std::int64_t{blockIdx.y} * kTransposeK; k0 < c.ld_dst;
       k0 += std::int64_t{gridDim.y} * kTransposeK) {
    const std::int64_t r = r0 + threadIdx.x;
#pragma unroll
    for (int i = 0; i < kTransposeK / kTransposeLanesY; ++i) {
      const int j = threadIdx.y + i * kTransposeLanesY;
      const std::int64_t kk = k0 + j;
      tile[j][threadIdx.x] = r < c.rows && kk < c.k ? c.src[kk * c.ld_src + r] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kTransposeRows / kTransposeLanesY; ++i) {
      const int j = threadIdx.y + i * kTransposeLanesY;
      const std::int64_t row = r0 + j;
      if (row >= c.rows) continue;
      float* out = c.dst + row * c.ld_dst + k0;
#pragma unroll
      for (int half = 0; half < kTransposeK; half += 32)
        if (k0 + half + threadIdx.x < c.ld_dst) out[half + threadIdx.x] = tile[half + threadIdx.x][j];
    }
    __syncthreads();  // the next tile's loads overwrite what this one's stores read
  }
}

void transpose_to_k_major(const TransposedCopy& c, cudaStream_t s) {
  const std::int64_t tiles_r = (c.rows + kTransposeRows - 1) / kTransposeRows;
  const std::int64_t tiles_k = (c.ld_dst + kTransposeK - 1) / kTransposeK;
  const dim3 grid(static_cast<unsigned>(tiles_r), static_cast<unsigned>(std::min<std::int64_t>(tiles_k, 65535)));
  transpose_to_k_major_kernel<<<grid, dim3(32, kTransposeLanesY), 0, s>>>(c);
  GT_CUDA_CHECK_LAUNCH();
}

// B as a _staged_b variant copies it: whole, where the copy engine would read it by class of rows.
StagedCopy staged_b_copy(const OperandView& b) {
  StagedCopy c = staged_copy(b, false);
  if (b_read_by_class(b)) c.floats = static_cast<std::size_t>(c.rows) * static_cast<std::size_t>(c.ld);
  return c;
}

}  // namespace

std::size_t staged_b_copies_floats(const OperandView& a, const OperandView& b) {
  const std::size_t floats_a = staged_copy(a, true).floats, floats_b = staged_b_copy(b).floats;
  return floats_b == 0 ? floats_a : staging_boundary(floats_a) + floats_b;
}

bool stage_operands(OperandView& a, OperandView& b, const LaunchScratch& scratch, cudaStream_t s) {
  // The scratch a variant sizes says which copies it makes: a staged variant's holds B's copy only where B cannot be
  // read by class, a _staged_b variant's (staged_b.hpp) holds B's copy there too.
  const bool copy_b = b_read_by_class(b) && scratch.staging && scratch.staging_floats >= staged_b_copies_floats(a, b);
  std::size_t used = 0;
  bool copied = false;
  PaddedCopy copies[2];
  int n_copies = 0;
  for (OperandView* v : {&a, &b}) {
    const StagedCopy c = v == &a ? staged_copy(a, true) : copy_b ? staged_b_copy(b) : staged_copy(b, false);
    if (c.floats == 0) continue;
    if (!scratch.staging || used + c.floats > scratch.staging_floats) {
      if (c.transposed)
        throw InputError("A stored k×m needs its K-major copy (" + std::to_string(c.floats) +
                         " floats), and the launch's staging scratch does not hold it");
      continue;
    }
    float* copy = scratch.staging + used;
    if (c.transposed) {
      transpose_to_k_major({v->ptr, v->ld, copy, c.ld, c.rows, c.cols}, s);
      v->k_major = true;
      copied = true;
    } else {
      copies[n_copies++] = {v->ptr, v->ld, copy, c.ld, c.rows, c.cols};
    }
    v->ptr = copy;
    v->ld = c.ld;
    v->vec4 = v->vec2 = true;
    used += staging_boundary(c.floats);
  }
  if (n_copies > 0) copy_rows_padded(copies[0], s, copies[1], scratch.behind_previous_kernel);
  return copied || n_copies > 0;
}

void copy_rows_padded(const PaddedCopy& first, cudaStream_t s, const PaddedCopy& second, bool behind_previous_kernel) {
  // Enough blocks to keep every SM's loads in flight, each thread then looping over a few 16-byte stores.
  constexpr int kThreads = 256;
  const std::int64_t quads = first.rows * (first.ld_dst / 4) + second.rows * (second.ld_dst / 4);
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((quads + kThreads - 1) / kThreads, 2048));
  const KernelLaunch launch(dim3(blocks), dim3(1), kThreads, 0, s, behind_previous_kernel);
  GT_CUDA_CALL(cudaLaunchKernelEx(&launch.config, copy_rows_kernel, first, second));
}

}  // namespace gemmtune::kernels
