#include "runtime/grad_epilogue.hpp"

#include <algorithm>

#include "cuda/cuda_call.hpp"
#include "kernels/epilogue.cuh"

namespace gemmtune::runtime {
namespace {

constexpr int kStripCols = 32;   // a block's column strip: one warp wide
constexpr int kWarps = 8;        // 256 threads
constexpr int kThreads = kWarps * 32;

struct GradArgs {
  const float* gy;
  const float* z;
  float* gz;
  float* gbias;
  float* partials;
  unsigned* tickets;
  std::int64_t m, n, rows_per_chunk;
  Activation act;
  float leaky_slope;
  float dropout_p;
  float keep_scale;  // 1/(1−p), computed as the forward's epilogue computes it
  std::uint64_t seed, offset;
};

// gZ of logical element (row, col) stored at `at`; stores it when kStoreGz.
template <bool kStoreGz>
__device__ __forceinline__ float grad_element(const GradArgs& a, std::int64_t row, std::int64_t col, std::int64_t at) {
  float g = __ldg(a.gy + at);
  if (a.act != Activation::None) g *= kernels::activation_derivative<float>(a.act, __ldg(a.z + at), a.leaky_slope);
  if (a.dropout_p > 0.f) {
    const auto element = static_cast<std::uint64_t>(row * a.n + col);
    g = kernels::dropout_keep(a.seed, a.offset, element, a.dropout_p) ? g * a.keep_scale : 0.f;
  }
  if constexpr (kStoreGz) a.gz[at] = g;
  return g;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
  return v;  // butterfly: every lane ends with the same, order-fixed sum
}

// Block (strip x, chunk y) handles columns [32x, 32x+32) of rows [y·rows_per_chunk, ...). Thread mapping follows the
// stored layout so every warp reads 128 contiguous bytes: along columns for row-major Y, along rows for the
// transposed store.
template <bool kTransposed, bool kStoreGz, bool kReduceBias>
__global__ void __launch_bounds__(kThreads) grad_epilogue_kernel(GradArgs a) {
  __shared__ float strip_sum[kStripCols];
  __shared__ float warp_part[kWarps][kStripCols + 1];
  __shared__ bool last_block;
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.x) * kStripCols;
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.y) * a.rows_per_chunk;
  const std::int64_t r1 = min(a.m, r0 + a.rows_per_chunk);

  if constexpr (!kTransposed) {
    const std::int64_t col = c0 + lane;
    float acc = 0.f;
    if (col < a.n) {
#pragma unroll 4
      for (std::int64_t row = r0 + warp; row < r1; row += kWarps) acc += grad_element<kStoreGz>(a, row, col, row * a.n + col);
    }
    if constexpr (kReduceBias) {
      warp_part[warp][lane] = acc;
      __syncthreads();
      if (warp == 0) {
        float s = 0.f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) s += warp_part[w][lane];
        strip_sum[lane] = s;
      }
    }
  } else {
    constexpr int kColsPerWarp = kStripCols / kWarps;
    float acc[kColsPerWarp] = {};
    for (std::int64_t row = r0 + lane; row < r1; row += 32) {
#pragma unroll
      for (int j = 0; j < kColsPerWarp; ++j) {
        const std::int64_t col = c0 + warp + kWarps * j;
        if (col < a.n) acc[j] += grad_element<kStoreGz>(a, row, col, col * a.m + row);
      }
    }
    if constexpr (kReduceBias) {
#pragma unroll
      for (int j = 0; j < kColsPerWarp; ++j) {
        const float s = warp_sum(acc[j]);
        if (lane == 0) strip_sum[warp + kWarps * j] = s;
      }
    }
  }
  if constexpr (!kReduceBias) return;

  // Stage two, in the same kernel: publish this chunk's strip sums; the strip's last block adds them up in order.
  __syncthreads();
  if (threadIdx.x < kStripCols && c0 + threadIdx.x < a.n)
    a.partials[static_cast<std::int64_t>(blockIdx.y) * a.n + c0 + threadIdx.x] = strip_sum[threadIdx.x];
  __threadfence();  // the partials are visible device-wide before the ticket says so
  __syncthreads();
  if (threadIdx.x == 0) last_block = atomicAdd(a.tickets + blockIdx.x, 1u) == gridDim.y - 1;
  __syncthreads();
  if (!last_block) return;

  const std::int64_t col = c0 + lane;
  float s = 0.f;
  if (col < a.n)
    for (unsigned chunk = static_cast<unsigned>(warp); chunk < gridDim.y; chunk += kWarps)
      s += __ldcg(a.partials + static_cast<std::int64_t>(chunk) * a.n + col);  // L2: other blocks wrote them
  warp_part[warp][lane] = s;
  __syncthreads();
  if (warp == 0 && col < a.n) {
    float total = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) total += warp_part[w][lane];
    a.gbias[col] = total;
  }
  if (threadIdx.x == 0) a.tickets[blockIdx.x] = 0;  // ready for the next call or graph replay
}

template <bool kTransposed, bool kStoreGz, bool kReduceBias>
void launch_kernel(const GradArgs& a, dim3 grid, cudaStream_t s) {
  grad_epilogue_kernel<kTransposed, kStoreGz, kReduceBias><<<grid, kThreads, 0, s>>>(a);
}

template <bool kTransposed>
void launch_layout(const GradArgs& a, dim3 grid, bool store_gz, bool reduce_bias, cudaStream_t s) {
  if (store_gz && reduce_bias) return launch_kernel<kTransposed, true, true>(a, grid, s);
  if (store_gz) return launch_kernel<kTransposed, true, false>(a, grid, s);
  launch_kernel<kTransposed, false, true>(a, grid, s);
}

}  // namespace

GradEpilogue::GradEpilogue(const GemmProblem& p, int sm_count) : problem_(p) {
  writes_gz_ = p.epi.act != Activation::None || p.epi.dropout();
  col_strips_ = static_cast<unsigned>((p.n + kStripCols - 1) / kStripCols);
  // Enough blocks to fill the GPU (8 resident blocks of 256 threads per SM), but at least 32 rows per chunk so
  // the second stage stays short.
  const std::int64_t want_blocks = std::int64_t{8} * std::max(sm_count, 1);
  const std::int64_t max_chunks = (p.m + 31) / 32;
  const std::int64_t chunks = std::clamp<std::int64_t>((want_blocks + col_strips_ - 1) / col_strips_, 1, max_chunks);
  rows_per_chunk_ = (p.m + chunks - 1) / chunks;
  row_chunks_ = static_cast<unsigned>((p.m + rows_per_chunk_ - 1) / rows_per_chunk_);
  if (p.epi.bias) {
    partials_ = DeviceBuffer<float>(static_cast<std::size_t>(row_chunks_) * static_cast<std::size_t>(p.n));
    tickets_ = DeviceBuffer<unsigned>(col_strips_);
    GT_CUDA_CALL(cudaMemset(tickets_.get(), 0, tickets_.bytes()));
    GT_CUDA_CALL(cudaDeviceSynchronize());  // the tickets are zero before any stream can launch the pass
  }
}

void GradEpilogue::launch(const float* gy, const float* z, float* gz, float* gbias, std::uint64_t seed,
                          std::uint64_t offset, cudaStream_t s) const {
  const bool reduce_bias = gbias != nullptr;
  if (!writes_gz_ && !reduce_bias) return;
  GradArgs a{};
  a.gy = gy;
  a.z = z;
  a.gz = gz;
  a.gbias = gbias;
  a.partials = partials_.get();
  a.tickets = tickets_.get();
  a.m = problem_.m;
  a.n = problem_.n;
  a.rows_per_chunk = rows_per_chunk_;
  a.act = problem_.epi.act;
  a.leaky_slope = problem_.epi.leaky_slope;
  a.dropout_p = problem_.epi.dropout_p;
  a.keep_scale = 1.0f / (1.0f - problem_.epi.dropout_p);
  a.seed = seed;
  a.offset = offset;
  const dim3 grid(col_strips_, row_chunks_);
  if (problem_.out == OutputLayout::Transposed)
    launch_layout<true>(a, grid, writes_gz_, reduce_bias, s);
  else
    launch_layout<false>(a, grid, writes_gz_, reduce_bias, s);
  GT_CUDA_CHECK_LAUNCH();
}

}  // namespace gemmtune::runtime
