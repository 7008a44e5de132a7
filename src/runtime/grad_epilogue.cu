#include "runtime/grad_epilogue.hpp"

#include <algorithm>
#include <cstdint>

#include "common/error.hpp"
#include "cuda/cuda_call.hpp"
#include "kernels/epilogue.cuh"

namespace gemmtune::runtime {
namespace {

constexpr int kWarps = 8;  // 256 threads
constexpr int kThreads = kWarps * 32;
constexpr int kUnroll = 2;  // row-major: steps of kVec rows in flight per thread

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
  const std::uint64_t* offset_ptr;  // non-null: the forward's offset, in device memory (read once per thread)
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

// Every block owns a strip of 32 columns (a 128-byte line of a row-major row) over a chunk of rows.
constexpr int kStrip = 32;

// Block (strip x, chunk y) handles the strip's columns over rows [y·rows_per_chunk, ...) and leaves its column sums
// in strip_sum (when kReduceBias). Every warp reads whole 128-byte lines. Row-major Y: a lane takes kVec adjacent
// columns, so a warp covers kVec rows of the strip per access; loads for kUnroll such steps are issued before any is
// used. Transposed Y: each warp owns 4 of the strip's columns and its lanes run down them kVec rows at a time.
template <bool kTransposed, int kVec, bool kStoreGz, bool kReduceBias>
__device__ __forceinline__ void grad_block(const GradArgs& a, float* strip_sum) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.x) * kStrip;
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.y) * a.rows_per_chunk;
  const std::int64_t r1 = min(a.m, r0 + a.rows_per_chunk);
  const bool has_z = a.act != Activation::None;

  if constexpr (!kTransposed) {
    constexpr int kLanesPerRow = kStrip / kVec, kRowsPerWarp = kVec, kRowsPerStep = kWarps * kRowsPerWarp;
    const int row_in_warp = lane / kLanesPerRow;
    const std::int64_t col = c0 + std::int64_t{kVec} * (lane % kLanesPerRow);
    float acc[kVec] = {};
    if (col < a.n) {
      for (std::int64_t row = r0 + kRowsPerWarp * warp + row_in_warp; row < r1; row += kUnroll * kRowsPerStep) {
        float g[kUnroll][kVec] = {}, z[kUnroll][kVec] = {};
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const std::int64_t r = row + u * kRowsPerStep;
          if (r < r1) {
            load<kVec>(a.gy + r * a.n + col, g[u]);
            if (has_z) load<kVec>(a.z + r * a.n + col, z[u]);
          }
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const std::int64_t r = row + u * kRowsPerStep;
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
      // One partial per (warp, row in warp) and column; thread c adds its column's in a fixed order.
      __shared__ float part[kWarps * kRowsPerWarp][kStrip + 1];
#pragma unroll
      for (int j = 0; j < kVec; ++j) part[kRowsPerWarp * warp + row_in_warp][kVec * (lane % kLanesPerRow) + j] = acc[j];
      __syncthreads();
      if (threadIdx.x < kStrip) {
        float s = 0.f;
#pragma unroll
        for (int i = 0; i < kWarps * kRowsPerWarp; ++i) s += part[i][threadIdx.x];
        strip_sum[threadIdx.x] = s;
      }
    }
  } else {
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

// Row-major: 6 blocks per SM (registers capped at 40) so the whole grid is resident in one wave. Transposed keeps 4
// columns' loads per lane in flight and would spill under that cap.
constexpr int kRowMajorBlocksPerSm = 6;

template <bool kTransposed, int kVec, bool kStoreGz, bool kReduceBias>
__global__ void __launch_bounds__(kThreads, kTransposed ? 2 : kRowMajorBlocksPerSm)
    grad_epilogue_kernel(GradArgs args) {
  GradArgs a = args;
  if (a.dropout_p > 0.f) a.offset = kernels::dropout_offset(a.offset, a.offset_ptr);
  __shared__ float strip_sum[kStrip];
  __shared__ float tail[kWarps][kStrip + 1];
  __shared__ bool last_block;
  grad_block<kTransposed, kVec, kStoreGz, kReduceBias>(a, strip_sum);
  if constexpr (!kReduceBias) return;

  // Stage two, in the same kernel: publish this chunk's strip sums; the strip's last block adds them in order.
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.x) * kStrip;
  __syncthreads();
  if (threadIdx.x < kStrip && c0 + threadIdx.x < a.n)
    a.partials[static_cast<std::int64_t>(blockIdx.y) * a.n + c0 + threadIdx.x] = strip_sum[threadIdx.x];
  __threadfence();  // the partials are visible device-wide before the ticket says so
  __syncthreads();
  if (threadIdx.x == 0) last_block = atomicAdd(a.tickets + blockIdx.x, 1u) == gridDim.y - 1;
  __syncthreads();
  if (!last_block) return;

  // This tail is on the critical path: warp w reads chunks w, w+8, ... of the strip, a whole 128-byte line each
  // (L2: other blocks wrote them), then thread c adds the 8 warps' sums for column c; the order is fixed.
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const bool in_range = c0 + lane < a.n;
  float sum = 0.f;
  for (unsigned chunk = static_cast<unsigned>(warp); chunk < gridDim.y; chunk += kWarps)
    if (in_range) sum += __ldcg(a.partials + static_cast<std::int64_t>(chunk) * a.n + c0 + lane);
  tail[warp][lane] = sum;
  __syncthreads();
  if (threadIdx.x < kStrip && in_range) {
    float total = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) total += tail[w][threadIdx.x];
    a.gbias[c0 + threadIdx.x] = total;
  }
  if (threadIdx.x == 0) a.tickets[blockIdx.x] = 0;  // ready for the next call or graph replay
}

template <bool kTransposed, int kVec>
void launch_shape(const GradArgs& a, unsigned row_chunks, bool store_gz, bool reduce_bias, cudaStream_t s) {
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
  const std::int64_t strips = (p.n + kStrip - 1) / kStrip;
  // About 4 blocks per SM, so every SM has loads in flight even at 256², in chunks no shorter than one step of the
  // block (32 rows; 8 row-major without 16-byte accesses) and at most 32 of them, so the tail, which is on the
  // critical path, reads at most four lines per warp. Chunks are whole multiples of 4 rows so vector accesses never
  // straddle one.
  // Row-major, the chunks also stop where the grid would outgrow one wave: at 3000x16384, rounding 528 blocks up to
  // two chunks of 512 strips made 1024 blocks for 792 places, a second wave a third full (H200: 184 us; one chunk
  // of 512 blocks, 168 us).
  const std::int64_t sms = std::max(sm_count, 1);
  const std::int64_t want_blocks = std::int64_t{4} * sms;
  const std::int64_t min_rows = transposed || vectorizable_ ? 32 : kWarps;
  std::int64_t max_chunks = std::min<std::int64_t>(32, (p.m + min_rows - 1) / min_rows);
  if (!transposed) max_chunks = std::min(max_chunks, std::max<std::int64_t>(1, kRowMajorBlocksPerSm * sms / strips));
  const std::int64_t chunks = std::clamp<std::int64_t>((want_blocks + strips - 1) / strips, 1, max_chunks);
  rows_per_chunk_ = ((p.m + chunks - 1) / chunks + 3) / 4 * 4;
  row_chunks_ = static_cast<unsigned>((p.m + rows_per_chunk_ - 1) / rows_per_chunk_);
  if (p.epi.bias) {
    partial_floats_ = static_cast<std::size_t>(row_chunks_) * static_cast<std::size_t>(p.n);
    ticket_count_ = static_cast<std::size_t>(strips);
  }
}

void GradEpilogue::launch(const float* gy, const float* z, float* gz, float* gbias, std::uint64_t seed,
                          std::uint64_t offset, const std::uint64_t* offset_ptr, float* partials, unsigned* tickets,
                          cudaStream_t s) const {
  const bool reduce_bias = gbias != nullptr;
  if (!writes_gz_ && !reduce_bias) return;
  GradArgs a{};
  a.gy = gy;
  a.z = z;
  a.gz = gz;
  a.gbias = gbias;
  if (reduce_bias && (!partials || !tickets))
    throw InputError("the bias gradient of " + problem_.key() + " needs its partial sums and tickets");
  a.partials = partials;
  a.tickets = tickets;
  a.m = problem_.m;
  a.n = problem_.n;
  a.rows_per_chunk = rows_per_chunk_;
  a.act = problem_.epi.act;
  a.leaky_slope = problem_.epi.leaky_slope;
  a.dropout_p = problem_.epi.dropout_p;
  a.keep_scale = 1.0f / (1.0f - problem_.epi.dropout_p);
  a.seed = seed;
  a.offset = offset;
  a.offset_ptr = offset_ptr;
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
