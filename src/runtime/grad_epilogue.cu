#include "runtime/grad_epilogue.hpp"

#include <algorithm>
#include <cstdint>

#include "cuda/cuda_call.hpp"
#include "kernels/epilogue.cuh"

namespace gemmtune::runtime {
namespace {

constexpr int kWarps = 8;  // 256 threads
constexpr int kThreads = kWarps * 32;
constexpr int kUnroll = 4;  // rows (row-major) or row groups (transposed) in flight per thread

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

template <int kVec>
__device__ __forceinline__ void load(const float* p, float (&v)[kVec]) {
  if constexpr (kVec == 4) {
    const float4 x = __ldg(reinterpret_cast<const float4*>(p));
    v[0] = x.x;
    v[1] = x.y;
    v[2] = x.z;
    v[3] = x.w;
  } else {
    v[0] = __ldg(p);
  }
}

template <int kVec>
__device__ __forceinline__ void store(float* p, const float (&v)[kVec]) {
  if constexpr (kVec == 4)
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  else
    p[0] = v[0];
}

// gY of kVec elements in, gZ out (in place). The elements run along a row of Y when the output is row-major and
// down a column when it is transposed; (row, col) is the first one's logical position, which names its dropout bit.
template <bool kTransposed, int kVec>
__device__ __forceinline__ void grad_elements(const GradArgs& a, std::int64_t row, std::int64_t col, float (&g)[kVec],
                                              const float (&z)[kVec]) {
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    if (a.act != Activation::None) g[j] *= kernels::activation_derivative<float>(a.act, z[j], a.leaky_slope);
    if (a.dropout_p > 0.f) {
      const std::int64_t r = kTransposed ? row + j : row, c = kTransposed ? col : col + j;
      g[j] = kernels::dropout_keep(a.seed, a.offset, static_cast<std::uint64_t>(r * a.n + c), a.dropout_p)
                 ? g[j] * a.keep_scale
                 : 0.f;
    }
  }
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
  return v;  // butterfly: every lane ends with the same, order-fixed sum
}

// Columns per block: a warp's width of columns (row-major: 32 lanes × kVec), or 32 (transposed: 4 per warp).
template <bool kTransposed, int kVec>
inline constexpr int kStripCols = kTransposed ? 32 : 32 * kVec;

// Block (strip x, chunk y) handles the strip's columns over rows [y·rows_per_chunk, ...). Every warp reads
// contiguous memory: 32·kVec columns of one row (row-major Y), or 32·kVec rows of one column (transposed Y).
// Loads for kUnroll rows (or row groups) are issued before any of them is used, so each thread keeps several
// 16-byte loads in flight. Returns, in strip_sum, this block's column sums (when kReduceBias).
template <bool kTransposed, int kVec, bool kStoreGz, bool kReduceBias>
__device__ __forceinline__ void grad_block(const GradArgs& a, float* strip_sum) {
  constexpr int kStrip = kStripCols<kTransposed, kVec>;
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.x) * kStrip;
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.y) * a.rows_per_chunk;
  const std::int64_t r1 = min(a.m, r0 + a.rows_per_chunk);
  const bool has_z = a.act != Activation::None;

  if constexpr (!kTransposed) {
    const std::int64_t col = c0 + std::int64_t{kVec} * lane;
    float acc[kVec] = {};
    if (col < a.n) {
      for (std::int64_t row = r0 + warp; row < r1; row += kUnroll * kWarps) {
        float g[kUnroll][kVec] = {}, z[kUnroll][kVec] = {};
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const std::int64_t r = row + u * kWarps;
          if (r < r1) {
            load<kVec>(a.gy + r * a.n + col, g[u]);
            if (has_z) load<kVec>(a.z + r * a.n + col, z[u]);
          }
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const std::int64_t r = row + u * kWarps;
          if (r >= r1) continue;
          grad_elements<false, kVec>(a, r, col, g[u], z[u]);
          if constexpr (kStoreGz) store<kVec>(a.gz + r * a.n + col, g[u]);
          if constexpr (kReduceBias) {
#pragma unroll
            for (int j = 0; j < kVec; ++j) acc[j] += g[u][j];
          }
        }
      }
    }
    if constexpr (kReduceBias) {
      __shared__ float warp_part[kWarps][kStrip + 1];
#pragma unroll
      for (int j = 0; j < kVec; ++j) warp_part[warp][kVec * lane + j] = acc[j];
      __syncthreads();
      for (int c = static_cast<int>(threadIdx.x); c < kStrip; c += kThreads) {
        float s = 0.f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) s += warp_part[w][c];
        strip_sum[c] = s;
      }
    }
  } else {
    // Each warp owns 4 of the strip's 32 columns; its lanes run down them kVec rows at a time.
    constexpr int kColsPerWarp = kStrip / kWarps;
    constexpr std::int64_t kRowsPerStep = 32 * kVec;
    float acc[kColsPerWarp] = {};
    for (std::int64_t row = r0 + std::int64_t{kVec} * lane; row < r1; row += kRowsPerStep) {
      float g[kColsPerWarp][kVec] = {}, z[kColsPerWarp][kVec] = {};
#pragma unroll
      for (int j = 0; j < kColsPerWarp; ++j) {
        const std::int64_t col = c0 + warp + kWarps * j;
        if (col < a.n) {
          load<kVec>(a.gy + col * a.m + row, g[j]);
          if (has_z) load<kVec>(a.z + col * a.m + row, z[j]);
        }
      }
#pragma unroll
      for (int j = 0; j < kColsPerWarp; ++j) {
        const std::int64_t col = c0 + warp + kWarps * j;
        if (col >= a.n) continue;
        grad_elements<true, kVec>(a, row, col, g[j], z[j]);
        if constexpr (kStoreGz) store<kVec>(a.gz + col * a.m + row, g[j]);
        if constexpr (kReduceBias) {
#pragma unroll
          for (int v = 0; v < kVec; ++v) acc[j] += g[j][v];
        }
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
}

template <bool kTransposed, int kVec, bool kStoreGz, bool kReduceBias>
__global__ void __launch_bounds__(kThreads) grad_epilogue_kernel(GradArgs a) {
  constexpr int kStrip = kStripCols<kTransposed, kVec>;
  __shared__ float strip_sum[kStrip];
  __shared__ bool last_block;
  grad_block<kTransposed, kVec, kStoreGz, kReduceBias>(a, strip_sum);
  if constexpr (!kReduceBias) return;

  // Stage two, in the same kernel: publish this chunk's strip sums; the strip's last block adds them in order.
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.x) * kStrip;
  __syncthreads();
  for (int c = static_cast<int>(threadIdx.x); c < kStrip; c += kThreads)
    if (c0 + c < a.n) a.partials[static_cast<std::int64_t>(blockIdx.y) * a.n + c0 + c] = strip_sum[c];
  __threadfence();  // the partials are visible device-wide before the ticket says so
  __syncthreads();
  if (threadIdx.x == 0) last_block = atomicAdd(a.tickets + blockIdx.x, 1u) == gridDim.y - 1;
  __syncthreads();
  if (!last_block) return;

  // This tail is on the critical path, so it is latency-bound work spread wide: each warp takes kStrip/kWarps
  // columns, its lanes split the chunks (kColsPerWarp independent L2 loads in flight per lane), and a butterfly
  // over the lanes adds the lane sums in a fixed order.
  constexpr int kColsPerWarp = kStrip / kWarps;
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const std::int64_t first_col = c0 + std::int64_t{warp} * kColsPerWarp;
  float sum[kColsPerWarp] = {};
  for (unsigned chunk = static_cast<unsigned>(lane); chunk < gridDim.y; chunk += 32) {
    const float* row = a.partials + static_cast<std::int64_t>(chunk) * a.n + first_col;
#pragma unroll
    for (int j = 0; j < kColsPerWarp; ++j)
      if (first_col + j < a.n) sum[j] += __ldcg(row + j);  // L2: other blocks wrote them
  }
#pragma unroll
  for (int j = 0; j < kColsPerWarp; ++j) {
    const float total = warp_sum(sum[j]);
    if (lane == 0 && first_col + j < a.n) a.gbias[first_col + j] = total;
  }
  if (threadIdx.x == 0) a.tickets[blockIdx.x] = 0;  // ready for the next call or graph replay
}

template <bool kTransposed, int kVec>
void launch_shape(const GradArgs& a, unsigned row_chunks, bool store_gz, bool reduce_bias, cudaStream_t s) {
  constexpr int kStrip = kStripCols<kTransposed, kVec>;
  const dim3 grid(static_cast<unsigned>((a.n + kStrip - 1) / kStrip), row_chunks);
  if (store_gz && reduce_bias)
    grad_epilogue_kernel<kTransposed, kVec, true, true><<<grid, kThreads, 0, s>>>(a);
  else if (store_gz)
    grad_epilogue_kernel<kTransposed, kVec, true, false><<<grid, kThreads, 0, s>>>(a);
  else
    grad_epilogue_kernel<kTransposed, kVec, false, true><<<grid, kThreads, 0, s>>>(a);
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

GradEpilogue::GradEpilogue(const GemmProblem& p, int sm_count) : problem_(p) {
  writes_gz_ = p.epi.act != Activation::None || p.epi.dropout();
  const bool transposed = p.out == OutputLayout::Transposed;
  // 16-byte accesses need the contiguous dimension to be a multiple of 4 (and aligned pointers, checked per call).
  vectorizable_ = (transposed ? p.m : p.n) % 4 == 0;
  const std::int64_t strip = transposed || !vectorizable_ ? 32 : 128;
  const std::int64_t strips = (p.n + strip - 1) / strip;
  // Enough blocks to fill the GPU (8 resident blocks of 256 threads per SM), at least 32 rows per chunk so the
  // second stage stays short, and chunks that are whole multiples of 4 rows so vector accesses never straddle one.
  const std::int64_t want_blocks = std::int64_t{8} * std::max(sm_count, 1);
  const std::int64_t max_chunks = (p.m + 31) / 32;
  const std::int64_t chunks = std::clamp<std::int64_t>((want_blocks + strips - 1) / strips, 1, max_chunks);
  rows_per_chunk_ = ((p.m + chunks - 1) / chunks + 3) / 4 * 4;
  row_chunks_ = static_cast<unsigned>((p.m + rows_per_chunk_ - 1) / rows_per_chunk_);
  if (p.epi.bias) {
    partials_ = DeviceBuffer<float>(static_cast<std::size_t>(row_chunks_) * static_cast<std::size_t>(p.n));
    tickets_ = DeviceBuffer<unsigned>(static_cast<std::size_t>((p.n + 31) / 32));  // the most strips any path uses
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
  const bool vec = vectorizable_ && aligned16(gy) && (!z || aligned16(z)) && (!writes_gz_ || aligned16(gz));
  const bool transposed = problem_.out == OutputLayout::Transposed;
  if (transposed)
    vec ? launch_shape<true, 4>(a, row_chunks_, writes_gz_, reduce_bias, s)
        : launch_shape<true, 1>(a, row_chunks_, writes_gz_, reduce_bias, s);
  else
    vec ? launch_shape<false, 4>(a, row_chunks_, writes_gz_, reduce_bias, s)
        : launch_shape<false, 1>(a, row_chunks_, writes_gz_, reduce_bias, s);
  GT_CUDA_CHECK_LAUNCH();
}

}  // namespace gemmtune::runtime
