// Skinny, streamed: Y = act(A·B + bias) for a decode batch (m ≤ 64) with B read from DRAM straight into registers, as
// cuBLAS's GEMV reads its matrix.
//
// The skinny family (skinny_gemm.cu) copies B's panel through a cp.async pipeline into shared memory, so every float of
// B also crosses shared memory and waits at a block barrier per chunk. At m ≤ 8 the math per float is a few FFMAs and
// that detour is what is left: on the H200 with a cold L2 its best tile streamed 4×6953×11081 at 66-69% of 4.8 TB/s
// while cuBLAS's GEMV streamed 1×6953×11081 at 78% (results/nvidia-h200/decode_read_flush_sweep.txt).
//
// Here a warp owns 128 columns, a float4 of each row per lane, and takes `stages` groups of 4 rows of B per step: it
// issues all 4·stages rows' loads before it multiplies any, so each warp keeps 512 bytes × 4·stages (8 KB at 4 groups)
// in flight with no block barrier. The block's warps split the step's k (and its columns, for tiles wider than 128).
// A's values of a step (bm rows × the warp's k) come in coalesced loads into the warp's own shared memory, then as
// broadcast 16-byte reads: loaded per row and group instead, ptxas kept them all in registers and spilled. At the end
// the warps' partial sums add up in shared memory in warp order, the slices through split_k.cuh's tickets
// (skinny_launch.cuh splits k until the GPU is full), and OutputTile runs the epilogue.
//
//   y[r][c..c+3] = Σ_k A[r][k] · B[k][c..c+3]      (one thread: bm rows × its 4 columns, its warp's share of k)
//
// B's rows off 16-byte boundaries (n not a multiple of 4, or a view into a wider array): lane l loads the aligned unit
// that holds its first column and takes the next unit from lane l + 1 by shuffles; lane 31's next unit, the 33rd, is
// loaded as 4 floats by lanes 0-3 and shuffled to it, so a row costs one 16-byte and one 4-byte load per lane either
// way. Rows 4 apart share a shift (4 rows are 4·ld floats), and groups start at multiples of 4 rows, so row i of every
// group has the same shift for the whole launch (RowShifts).
//
// Edges take a guarded path of 4-byte loads: a warp whose 128 columns reach past n, and the step that holds B's last
// row, whose units may extend past the matrix.
#include <algorithm>

#include "kernels/compiled_variant.hpp"
#include "kernels/epilogue.cuh"
#include "kernels/operand_view.cuh"
#include "kernels/output_tile.cuh"
#include "kernels/skinny_launch.cuh"
#include "kernels/split_k.cuh"
#include "kernels/tile_schedule.cuh"
#include "kernels/unit_loader.cuh"

namespace gemmtune::kernels {
namespace {

constexpr int kStreamThreads = 256;
constexpr int kWarpCols = 128;  // 32 lanes × a float4

template <class T>
struct StreamShape {
  static_assert(T::threads == kStreamThreads, "the thread mapping assumes 8 warps");
  static constexpr int kColWarps = T::bn / kWarpCols;
  static constexpr int kKWarps = kStreamThreads / 32 / kColWarps;
  static constexpr int kGroups = T::stages;  // 4-row groups a warp loads before it multiplies
  static_assert(T::bn % kWarpCols == 0 && kKWarps >= 1, "warps own whole 128-column strips");
  static_assert(T::bk == 4 * kGroups * kKWarps, "a step is every k-warp's groups");
  using Output = OutputTile<T::bm, T::bn, kStreamThreads>;
  using Parts = TileParts<T::bm, T::bn, kKWarps, kStreamThreads>;  // the k-warps' partial sums, before the tile
  static constexpr int kSumFloats = Parts::kFloats;
  // Each warp's A values of a step (bm rows × its 4·kGroups of k), spread over its lanes' loads.
  static constexpr int kAFloats = T::bm * 4 * kGroups, kALoads = kAFloats / 32;
  static_assert(kAFloats % 32 == 0, "lanes load A evenly");
  static constexpr std::size_t kBytes = (kSumFloats + kStreamThreads / 32 * kAFloats) * sizeof(float) + Output::kBytes;
};

// A row's 4 columns as loaded, before the shift: this lane's unit, and (lanes 0-3) one float of the warp's 33rd unit.
struct RawRow {
  float4 unit;
  float extra;
};

__device__ __forceinline__ float4 shuffle_down(const float4& v) {
  return make_float4(__shfl_down_sync(~0u, v.x, 1), __shfl_down_sync(~0u, v.y, 1), __shfl_down_sync(~0u, v.z, 1),
                     __shfl_down_sync(~0u, v.w, 1));
}

// The whole warp calls it (shuffles): lane l's 4 floats from `shift` into its unit, the rest from lane l + 1's.
__device__ __forceinline__ float4 shifted_row(const RawRow& raw, int shift, int lane) {
  if (shift == 0) return raw.unit;
  float4 next = shuffle_down(raw.unit);
  const float4 last = make_float4(__shfl_sync(~0u, raw.extra, 0), __shfl_sync(~0u, raw.extra, 1),
                                  __shfl_sync(~0u, raw.extra, 2), __shfl_sync(~0u, raw.extra, 3));
  if (lane == 31) next = last;
  return shifted_float4(raw.unit, next, shift);
}

// This lane's A values of one step into the warp's own bm × kRowsK floats of shared memory: lanes take consecutive k
// of a row (coalesced), and k at or past `left` (the matrix's end) reads as zero.
template <int kLoads, int kRowsK>
__device__ __forceinline__ void stage_a(float* a_step, const float* const (&src)[kLoads], std::int64_t step_offset,
                                        std::int64_t left, int lane) {
  float values[kLoads];
#pragma unroll
  for (int j = 0; j < kLoads; ++j) {
    const int q = (lane + 32 * j) % kRowsK;
    values[j] = q < left ? __ldg(src[j] + step_offset) : 0.f;
  }
#pragma unroll
  for (int j = 0; j < kLoads; ++j) a_step[lane + 32 * j] = values[j];
}

template <class T, bool kUnitsB, bool kSplitK>
__global__ void __launch_bounds__(kStreamThreads)
    skinny_stream_kernel(OperandView a, OperandView b, EpilogueParams e, SplitK split) {
  using S = StreamShape<T>;
  constexpr int kGroups = S::kGroups, kRowsK = 4 * kGroups;
  extern __shared__ float4 shared_mem[];
  float* const sums = reinterpret_cast<float*>(shared_mem);
  float* const tile = sums + S::kSumFloats;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int k_warp = warp % S::kKWarps, col_warp = warp / S::kKWarps;
  float* const a_step = tile + S::Output::kBytes / sizeof(float) + warp * S::kAFloats;
  const BlockTile block = grouped_block_tile(T::bm, T::bn, e.m, e.n);
  const std::int64_t warp_col = block.col0 + col_warp * kWarpCols, col = warp_col + 4 * lane;
  const bool warp_inside = warp_col + kWarpCols <= b.rows;  // B, read as op(B)ᵀ, has n rows

  const KTileRange k_range = slice_k_tiles<kSplitK>(static_cast<int>((a.k + T::bk - 1) / T::bk), split.slices);
  const std::int64_t k_first = std::int64_t{k_range.begin} * T::bk + k_warp * kRowsK;
  const RowShifts shift = kUnitsB ? RowShifts(b, warp_col) : RowShifts();

  // This lane's share of the warp's A values per step (bm rows × kRowsK of k): rows past m repeat A's last row, which
  // is computed and never stored, so the math needs no branch.
  const float* a_src[S::kALoads];
#pragma unroll
  for (int j = 0; j < S::kALoads; ++j) {
    const int idx = lane + 32 * j, r = idx / kRowsK;
    a_src[j] = a.ptr + std::min<std::int64_t>(block.row0 + r, a.rows - 1) * a.ld + idx % kRowsK;
  }

  float acc[T::bm][4] = {};
#pragma unroll 1
  for (int t = 0; t < k_range.end - k_range.begin; ++t) {
    const std::int64_t k0 = k_first + std::int64_t{t} * T::bk;  // this warp's first row of B in the step
    float4 v[kGroups][4];
    // Strictly below k: the step that holds B's last row takes the guarded path, so no unit reaches past the matrix.
    if (warp_inside && k0 + kRowsK < b.k) {
      RawRow raw[kGroups][4];
      const float* row = b.ptr + k0 * b.ld + warp_col;
#pragma unroll
      for (int g = 0; g < kGroups; ++g)
#pragma unroll
        for (int i = 0; i < 4; ++i, row += b.ld) {
          if constexpr (kUnitsB) {
            const float* const units = row - shift[i];
            raw[g][i].unit = __ldg(reinterpret_cast<const float4*>(units) + lane);
            raw[g][i].extra = lane < 4 ? __ldg(units + kWarpCols + lane) : 0.f;
          } else {
            raw[g][i].unit = __ldg(reinterpret_cast<const float4*>(row) + lane);
          }
        }
      stage_a<S::kALoads, kRowsK>(a_step, a_src, k0, a.k - k0, lane);
#pragma unroll
      for (int g = 0; g < kGroups; ++g)
#pragma unroll
        for (int i = 0; i < 4; ++i) v[g][i] = kUnitsB ? shifted_row(raw[g][i], shift[i], lane) : raw[g][i].unit;
    } else {
#pragma unroll
      for (int g = 0; g < kGroups; ++g)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const std::int64_t row = k0 + g * 4 + i;
          float c[4];
#pragma unroll
          for (int j = 0; j < 4; ++j)
            c[j] = row < b.k && col + j < b.rows ? __ldg(b.ptr + row * b.ld + col + j) : 0.f;
          v[g][i] = make_float4(c[0], c[1], c[2], c[3]);
        }
      stage_a<S::kALoads, kRowsK>(a_step, a_src, k0, a.k - k0, lane);
    }
    __syncwarp();
    // A[r][k0 + 4g .. 4g + 3] is one broadcast 16-byte read.
#pragma unroll
    for (int g = 0; g < kGroups; ++g)
#pragma unroll
      for (int r = 0; r < T::bm; ++r) {
        const float4 a4 = *reinterpret_cast<const float4*>(a_step + r * kRowsK + 4 * g);
        const float ak[4] = {a4.x, a4.y, a4.z, a4.w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          acc[r][0] = fmaf(ak[i], v[g][i].x, acc[r][0]);
          acc[r][1] = fmaf(ak[i], v[g][i].y, acc[r][1]);
          acc[r][2] = fmaf(ak[i], v[g][i].z, acc[r][2]);
          acc[r][3] = fmaf(ak[i], v[g][i].w, acc[r][3]);
        }
      }
    __syncwarp();  // every lane has read the step's A before the next step overwrites it
  }

  using Output = typename S::Output;
  using Parts = typename S::Parts;
#pragma unroll
  for (int r = 0; r < T::bm; ++r) Parts::store(sums, k_warp, r, col_warp * kWarpCols + 4 * lane, acc[r]);
  __syncthreads();
  Parts::template add_into<Output>(sums, tile, tid);
  __syncthreads();
  if constexpr (kSplitK)
    if (!gather_skinny_split_k<Output, T::bm, T::bn, kStreamThreads>(tile, split, tid)) return;
  Output::finish(tile, e, block, tid);
}

template <class T, bool kUnitsB>
void launch_split_or_not(const GemmProblem& p, const GemmOperands& x, int slices, const LaunchScratch& scratch,
                         cudaStream_t s) {
  constexpr std::size_t kBytes = StreamShape<T>::kBytes;
  if (slices > 1)
    return launch_skinny_tiles<&skinny_stream_kernel<T, kUnitsB, true>, T, kStreamThreads, kBytes>(p, x, slices,
                                                                                                    scratch, s);
  launch_skinny_tiles<&skinny_stream_kernel<T, kUnitsB, false>, T, kStreamThreads, kBytes>(p, x, 1, scratch, s);
}

// B's alignment, chosen per launch: it is a property of the pointer as much as of the shape.
template <class T>
void launch_skinny_stream(const GemmProblem& p, const GemmOperands& x, int slices, const LaunchScratch& scratch,
                          cudaStream_t s) {
  if (operand_b(p, x).vec4) return launch_split_or_not<T, false>(p, x, slices, scratch, s);
  launch_split_or_not<T, true>(p, x, slices, scratch, s);
}

// bm × bn × bk, stages = 4-row groups per warp per step; wn = bn / 8 makes the 8 warps. 8 rows serve m = 1-8 with
// A's last row repeated. 4 groups in flight per warp (8 KB) need about 200 registers, one block per SM. On the H200
// this tile was the fastest candidate at 4×8192×3001 (1.08-1.10x the skinny tiles; B's rows aligned) and slower than
// them wherever B's rows were not (the shuffles, 0.6-0.9x); 2 groups, and 16 rows, were never the fastest.
//                                  bm   bn   bk  wm  wn tm tn stages
using SkinnyStreamTiles = TileList<Tile<8, 128, 128, 8, 16, 0, 0, 4>>;

template <class... Tiles>
std::vector<CompiledVariant> compile_all(TileList<Tiles...>) {
  return {CompiledVariant{Tiles::config(), &launch_skinny_stream<Tiles>, false, &skinny_slices<Tiles>}...};
}

}  // namespace

std::vector<CompiledVariant> skinny_stream_variants() { return compile_all(SkinnyStreamTiles{}); }

}  // namespace gemmtune::kernels
