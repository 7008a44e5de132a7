// Skinny family: Y = act(A·B + bias) where m is a decode-time batch (1-64 rows) against a k×n weight.
//
// At m ≤ 16 each float of B is used m times, so the GEMM is a stream of B from DRAM: 16×2048×16384 moves 134 MB for
// 1.1 GFLOP, 28 µs at the H200's 4.8 TB/s and 16 µs of FFMA. A tensor-core tile of 64 or 128 rows pads m and still
// waits on B, and few output tiles leave most SMs idle (2×824×11008 is 7 tiles of 128 columns). So a block takes bm
// rows × bn columns, streams its k×bn panel of B through a cp.async pipeline (`stages` chunks of bk rows in flight),
// and the family splits k over as many blocks as fill the GPU (skinny_slices), the slices adding up through
// split_k.cuh's tickets. Two kinds of math consume the stream: exact FFMA (FfmaMath, fp32 and tf32 problems) and
// mma.sync with n in the mma's rows, for m where FFMA cannot keep up with B: tf32 (MmaMath, tf32 problems) and 3xtf32
// (Mma3xMath, 3xtf32 problems, and fp32 ones under the fp32-equivalent policy).
// Where they stand on the H200: kernels/PERFORMANCE.md.
//
// A must be K-major and B MN-major (NN): the one layout where both are read as 16-byte chunks along memory; the others
// run on the tensor-core families. Any alignment: where B's rows are not 16-byte aligned (n not a multiple of 4: a
// vocabulary of 50257, an odd width) its panel is copied in whole aligned 16-byte units into raw rows 4 floats wider
// and read at each row's shift (kernels/unit_loader.cuh: UnitCursor, RowShifts), a quarter of the copies of 4-byte
// pieces; A (m×bk floats a chunk) keeps cp.async's 4-byte fallback.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>

#include "kernels/cluster_split_k.cuh"
#include "kernels/compiled_variant.hpp"
#include "kernels/epilogue.cuh"
#include "kernels/operand_view.cuh"
#include "kernels/output_tile.cuh"
#include "kernels/skinny_launch.cuh"
#include "kernels/split3x_promotion.cuh"
#include "kernels/split_k.cuh"
#include "kernels/tile_loader.cuh"
#include "kernels/tile_schedule.cuh"
#include "kernels/unit_loader.cuh"

namespace gemmtune::kernels {
namespace {

// A tile whose B copies go through L1 (ptx::CopyPath::ThroughL1) rather than around it; it also splits k counting
// the blocks its shared memory fits per SM (resident_blocks below), since it streams from three. On cold-L2 vocabulary
// heads (results/nvidia-h200/decode_weights_sweep.txt) the 4-stage mma tiles switched to L1 ran 0.87-1.03x as fast,
// all but 16×128×32 (1.04-1.25x), and the FFMA tiles lost too; 3-stage tiles of 52-59 KB, two or three per SM,
// through L1 and split for them, are 1.05-1.18x the rest of the registry on all twelve shapes in tf32, and FFMA's
// 8-row ones (multiplying the problem's rows only) 1.0-1.12x at m = 1 and 4 in fp32. So the path is the tile's.
template <class T>
struct BThroughL1 : T {};
template <class T>
struct TakesBThroughL1 : std::false_type {};
template <class T>
struct TakesBThroughL1<BThroughL1<T>> : std::true_type {};

// Tile T run for a problem of at most kRows rows: FFMA multiplies only those rows, where T's other rows would be
// padding (at m = 1 an 8-row tile issued 8 FFMAs per float of B where 1 was needed). The launch picks it by m
// (with_rows_for), so the row loop stays unrolled with no branch in it.
template <class T, int kRows>
struct RowsComputed : T {
  static constexpr int rows_computed = kRows;
};
template <class T, int kRows>
struct TakesBThroughL1<RowsComputed<T, kRows>> : TakesBThroughL1<T> {};

// A tile that never splits k: one block streams its tile's whole k×bn panel, 4 stages of 128 rows in flight (81-113
// KiB at 32 columns, 161-181 at 64; an A100 holds 163). Split, a call ends in a chain of L2 round trips (each slice's
// partial written and fenced, a ticket, the last block's gather) that a decode GEMM of a few MB, done in 5-7 µs, pays
// in full. What torch.compile's max-autotune picked at 5×4096×424, 2×4096×768 and 4×2048×1024 tf32 (H200): Triton tiles
// of 16×32, 2 warps, k whole, 5 stages of 128 rows; 5.5 µs a call at the first, where every split skinny tile took
// 6.8-7.2 µs of kernel time alone.
template <class T>
struct WholeK : T {
  static constexpr TileConfig config() {
    TileConfig c = T::config();
    c.whole_k = true;
    return c;
  }
};

template <class T, class = void>
struct RowsOf {
  static constexpr int value = T::bm;
};
template <class T>
struct RowsOf<T, std::void_t<decltype(T::rows_computed)>> {
  static constexpr int value = T::rows_computed;
};

// FFMA, exact fp32: the block's 256 threads = bn/4 column groups (a float4 of B each) × kLanes k-lanes; lane l sums the
// 4-row groups l, l + kLanes, … of each chunk, reading A's 4 floats of each of bm rows as one broadcast float4: per 4
// rows of B a thread issues 4 + bm 16-byte loads for 16·bm FFMAs. The lanes add up in shared memory in lane order, so
// results do not depend on timing.
template <class T, bool kUnitsB>
struct FfmaMath {
  static constexpr bool kUnits = kUnitsB;
  static constexpr bool kRegisterLight = false;
  static constexpr int kRows = RowsOf<T>::value;  // rows multiplied; the tile's others stay 0
  // Blocks per SM a tile through L1 asks ptxas to leave registers for: 1 row fits 3 blocks' 80 registers (64-79);
  // 4 rows spilled 16 bytes there and ran 1.03-1.47x slower at m = 4 than with 2 blocks' 128 (no spill).
  static constexpr int kMaxBlocksThroughL1 = kRows <= 1 ? 3 : 2;
  static constexpr int kColGroups = T::bn / 4;
  static constexpr int kLanes = T::threads / kColGroups;
  static_assert(T::threads % kColGroups == 0, "column groups split the block evenly");
  static_assert(T::bk % (4 * kLanes) == 0, "every lane takes whole 4-row groups of each chunk");
  // A raw row's extra unit. Only there: the aligned tiles at bn + 4 floats ran 1.05-1.07x faster at some decode
  // shapes and 0.84x at 16x8192x3001 (8x128x64; H200 sweeps of scripts/dev/decode_unaligned_profile.json).
  static constexpr int kBStride = kUnits ? T::bn + 4 : T::bn;
  static constexpr int kAStride = T::bk + 4;  // keeps A's rows 16-byte aligned; reads are broadcasts anyway
  static constexpr int kSumFloats = kLanes * T::bm * T::bn;  // the lanes' partial sums, before the output tile

  struct Acc {
    float v[T::bm][4];
  };

  // kUnits: b holds raw rows; row 4g + i's 4 floats of this column group span two units, picked at shift[i].
  __device__ static void chunk(Acc& acc, const float* b, const float* a, int tid, const RowShifts& shift) {
    const int group = tid % kColGroups, lane = tid / kColGroups;
#pragma unroll
    for (int q = 0; q < T::bk / 4 / kLanes; ++q) {
      const int g = lane + q * kLanes;
      float4 bv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float4* const unit = reinterpret_cast<const float4*>(b + (g * 4 + i) * kBStride + group * 4);
        bv[i] = kUnits ? shifted_float4(unit[0], unit[1], shift[i]) : unit[0];
      }
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const float4 av = *reinterpret_cast<const float4*>(a + r * kAStride + g * 4);
        const float ak[4] = {av.x, av.y, av.z, av.w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          acc.v[r][0] = fmaf(ak[i], bv[i].x, acc.v[r][0]);
          acc.v[r][1] = fmaf(ak[i], bv[i].y, acc.v[r][1]);
          acc.v[r][2] = fmaf(ak[i], bv[i].z, acc.v[r][2]);
          acc.v[r][3] = fmaf(ak[i], bv[i].w, acc.v[r][3]);
        }
      }
    }
  }

  // Call after a barrier that ends every read of the pipeline's bytes; ends with every put() done.
  template <class Output>
  __device__ static void to_tile(const Acc& acc, float* sums, float* tile, int tid) {
    using Parts = TileParts<T::bm, T::bn, kLanes, T::threads>;
    const int group = tid % kColGroups, lane = tid / kColGroups;
#pragma unroll
    for (int r = 0; r < T::bm; ++r) Parts::store(sums, lane, r, group * 4, acc.v[r]);
    __syncthreads();
    Parts::template add_into<Output>(sums, tile, tid);
    __syncthreads();
  }
};

// tf32 tensor cores, mma.sync m16n8k8 with the roles swapped: Yᵀ = Bᵀ·Aᵀ, so n fills the mma's 16 rows and m its 8
// columns. m pads to a multiple of 8, not to a 64-row wgmma, and FFMA no longer bounds m = 9-64 (at 16 rows FFMA
// needs half the SM's fp32 peak to keep up with the B stream). Warp w owns bn/8 columns over the whole chunk, so no
// lanes add up. Per k8 step a thread loads its 4 elements of the 16×8 fragment of Bᵀ and 2 of Aᵀ per 8 rows of m.
// kSplit3x: 3xtf32, as the mma family does it (kernels/mma_gemm.cuh): x = big + small, acc += small·big + big·small
// + big·big, the products of kSplit3xPromoteSteps k8 steps in a fresh accumulator added into acc with FADD, and the
// outputs scaled back once for the truncation those accumulators still take (kernels/split3x_promotion.cuh). At
// m = 16 exact FFMA cannot keep up with B (50-53% of 4.8 TB/s), and three mma per step still can. Three independent
// accumulators a step (small·big, big·small, big·big) instead of one chain ran 0.88-0.97x as fast at m = 16
// (results/nvidia-h200/decode_m16_tries.txt): the chain's latency is not what holds these tiles at 64-72%.
// Where the block's warps outnumber bn's 16-column tiles (8 warps under 128 columns) they cannot each own 16 columns:
// kKGroups groups of warps take turns over a chunk's k8 steps (group j steps j, j + kKGroups, …), and the groups' sums
// add up in shared memory in group order, as FFMA's lanes do.
template <class T, bool kUnitsB, bool kSplit3x>
struct MmaMathOf {
  static constexpr bool kUnits = kUnitsB;
  static constexpr bool kRegisterLight = true;
  static constexpr int kWarps = T::threads / 32;
  static constexpr int kColWarps = T::bn / 16 < kWarps ? T::bn / 16 : kWarps;
  static constexpr int kKGroups = kWarps / kColWarps;
  static constexpr int kNTiles = T::bn / kColWarps / 16;  // 16-column mma tiles per warp
  static constexpr int kMTiles = T::bm / 8;
  // 3xtf32's doubled fragments of four mma tiles a warp (16×256) spilled under three blocks' 80 registers and took
  // 1.45-1.77x as long as at two blocks' 128; two tiles (16×128, 8×256) stay at three, where 16×128 ran 0.94-1.11x
  // as fast as at two (results/nvidia-h200/decode_3xtf32_sweep.txt).
  static constexpr int kMaxBlocksThroughL1 = kSplit3x && kNTiles * kMTiles > 2 ? 2 : 3;
  static constexpr int kSteps = kSplit3x ? kSplit3xPromoteSteps : 1;  // k8 steps per fresh accumulator
  static_assert(kNTiles >= 1 && T::bn % (kColWarps * 16) == 0 && kWarps % kColWarps == 0 && T::bm % 8 == 0 &&
                    T::bk % (8 * kSteps * kKGroups) == 0,
                "warps own whole 16-column tiles of whole 8-row groups of m, and whole promotions of k");
  // The Bᵀ fragment reads (k = t, n = g) and (k = t + 4, …): bank 8t + g with 8 floats of padding, conflict-free.
  static constexpr int kBStride = T::bn + 8;
  static constexpr int kAStride = T::bk + 4;  // the Aᵀ fragment reads (m = g, k = t): bank 4g + t
  static constexpr int kSumFloats = kKGroups > 1 ? kKGroups * T::bm * T::bn : 0;

  struct Acc {
    float v[kNTiles][kMTiles][4];
  };

  // One k8 step's fragment elements as floats: Bᵀ's (n = g and g + 8, k = t and t + 4) and Aᵀ's (m = g, k = t and
  // t + 4) for every tile of the warp.
  struct StepValues {
    float b[kNTiles][4], a[kMTiles][2];
  };
  __device__ static void load_step(StepValues& v, const float* bw, const float* a, int k8, int g, int t) {
#pragma unroll
    for (int i = 0; i < kNTiles; ++i) {
      const float* const col = bw + i * 16 + (k8 + t) * kBStride;
      v.b[i][0] = col[0];
      v.b[i][1] = col[8];
      v.b[i][2] = col[4 * kBStride];
      v.b[i][3] = col[4 * kBStride + 8];
    }
#pragma unroll
    for (int j = 0; j < kMTiles; ++j) {
      const float* const row = a + (j * 8 + g) * kAStride + k8 + t;
      v.a[j][0] = row[0];
      v.a[j][1] = row[4];
    }
  }

  // big = tf32(x) with its low bits cleared, small = x − big (exact in fp32; the mma reads its top 19 bits).
  template <int kRegs>
  __device__ static void split(const float (&x)[kRegs], std::uint32_t (&big)[kRegs], std::uint32_t (&small)[kRegs]) {
#pragma unroll
    for (int r = 0; r < kRegs; ++r) {
      big[r] = ptx::to_tf32_exact(x[r]);
      small[r] = __float_as_uint(x[r] - __uint_as_float(big[r]));
    }
  }

  // kUnits: b holds raw rows (the 8 floats of padding hold the extra unit); this thread reads rows k8 + t and
  // k8 + t + 4 only, which share shift[t].
  __device__ static void chunk(Acc& acc, const float* b, const float* a, int tid, const RowShifts& shift) {
    const int warp = tid / 32, g = tid % 32 / 4, t = tid % 4, group = warp / kColWarps;
    const float* const bw = b + warp % kColWarps * kNTiles * 16 + g + (kUnits ? shift[t] : 0);
#pragma unroll
    for (int q = 0; q < T::bk / (8 * kSteps * kKGroups); ++q) {
      const int k8 = (q * kKGroups + group) * 8 * kSteps;
      StepValues v[kSteps];
#pragma unroll
      for (int s = 0; s < kSteps; ++s) load_step(v[s], bw, a, k8 + 8 * s, g, t);
      if constexpr (!kSplit3x) {
        std::uint32_t bt[kNTiles][4], at[kMTiles][2];
#pragma unroll
        for (int i = 0; i < kNTiles; ++i)
#pragma unroll
          for (int r = 0; r < 4; ++r) bt[i][r] = ptx::to_tf32(v[0].b[i][r]);
#pragma unroll
        for (int j = 0; j < kMTiles; ++j)
#pragma unroll
          for (int r = 0; r < 2; ++r) at[j][r] = ptx::to_tf32(v[0].a[j][r]);
#pragma unroll
        for (int i = 0; i < kNTiles; ++i)
#pragma unroll
          for (int j = 0; j < kMTiles; ++j) ptx::mma_tf32(acc.v[i][j], bt[i], at[j]);
      } else {
        std::uint32_t bt[kSteps][kNTiles][4], bs[kSteps][kNTiles][4], at[kSteps][kMTiles][2], as[kSteps][kMTiles][2];
#pragma unroll
        for (int s = 0; s < kSteps; ++s) {
#pragma unroll
          for (int i = 0; i < kNTiles; ++i) split(v[s].b[i], bt[s][i], bs[s][i]);
#pragma unroll
          for (int j = 0; j < kMTiles; ++j) split(v[s].a[j], at[s][j], as[s][j]);
        }
#pragma unroll
        for (int i = 0; i < kNTiles; ++i)
#pragma unroll
          for (int j = 0; j < kMTiles; ++j) {
            float part[4] = {0.f, 0.f, 0.f, 0.f};  // small products first, while the sum is small
#pragma unroll
            for (int s = 0; s < kSteps; ++s) {
              ptx::mma_tf32(part, bs[s][i], at[s][j]);
              ptx::mma_tf32(part, bt[s][i], as[s][j]);
            }
#pragma unroll
            for (int s = 0; s < kSteps; ++s) ptx::mma_tf32(part, bt[s][i], at[s][j]);
#pragma unroll
            for (int q = 0; q < 4; ++q) acc.v[i][j][q] += part[q];
          }
      }
    }
  }

  // The accumulator (n = g or g + 8, m = 2t or 2t + 1) lands at tile bank 8t + g (OutputTile's stride ≡ 4 mod 32).
  // With k groups it goes to the group's part of sums first, and the parts are added into the tile.
  template <class Output>
  __device__ static void to_tile(const Acc& acc, float* sums, float* tile, int tid) {
    const int warp = tid / 32, g = tid % 32 / 4, t = tid % 4, group = warp / kColWarps;
    const auto put = [&](int m, int n, float v) {
      if constexpr (kKGroups > 1)
        sums[(group * T::bm + m) * T::bn + n] = v;
      else
        UnshrunkOutput<Output>::put(tile, m, n, v);
    };
#pragma unroll
    for (int i = 0; i < kNTiles; ++i)
#pragma unroll
      for (int j = 0; j < kMTiles; ++j) {
        const int n = warp % kColWarps * kNTiles * 16 + i * 16 + g, m = j * 8 + 2 * t;
        put(m, n, acc.v[i][j][0]);
        put(m + 1, n, acc.v[i][j][1]);
        put(m, n + 8, acc.v[i][j][2]);
        put(m + 1, n + 8, acc.v[i][j][3]);
      }
    __syncthreads();
    if constexpr (kKGroups > 1) {
      TileParts<T::bm, T::bn, kKGroups, T::threads>::template add_into<UnshrunkOutput<Output>>(sums, tile, tid);
      __syncthreads();
    }
  }

 private:
  // Output's put() of a value the split products shrank (3xtf32), scaled back.
  template <class Output>
  struct UnshrunkOutput {
    __device__ static void put(float* tile, int r, int c, float v) {
      Output::put(tile, r, c, kSplit3x ? split3x_unshrink(v) : v);
    }
  };
};
template <class T, bool kUnitsB>
using MmaMath = MmaMathOf<T, kUnitsB, false>;
template <class T, bool kUnitsB>
using Mma3xMath = MmaMathOf<T, kUnitsB, true>;

// Shared memory of one tile shape: the pipeline's stages (B's panel chunk [k][n], then A's rows [m][k]), and after the
// loop the math's partial sums followed by the output tile, in the same bytes.
template <class T, class Math>
struct SkinnyLayout {
  static constexpr int kBFloats = T::bk * Math::kBStride;
  static constexpr int kStageFloats = kBFloats + T::bm * Math::kAStride;
  static constexpr int kALoaders = std::min(T::threads, T::bm * T::bk / 4);  // 4-float chunks of A
  using Output = OutputTile<T::bm, T::bn, T::threads>;
  static constexpr std::size_t kBytes = std::max(std::size_t{T::stages} * kStageFloats * sizeof(float),
                                                 Math::kSumFloats * sizeof(float) + Output::kBytes);
  // Blocks per SM that ptxas must leave registers for: as many as the shared memory holds (228 KiB per SM on sm_90,
  // 1 KiB of it reserved per block), up to 3, for the mma math (70-100 registers); 1 for FFMA, whose 16-row tiles need
  // 160-230; for tiles through L1, what their math fits (kMaxBlocksThroughL1). Without it the 8×128 mma tile reading
  // raw units took 81 registers, one more than 3 blocks allow: 2 blocks per SM, 2.5 waves at 4×6953×11081, DRAM at
  // 62.6% against 67.9% for the same tile on aligned rows (ncu).
  static constexpr int kSharedBytesPerSm = 228 << 10, kReservedBytesPerBlock = 1 << 10;  // sm_90
  static constexpr int kSharedBlocks = kSharedBytesPerSm / static_cast<int>(kBytes + kReservedBytesPerBlock);
  static constexpr int kMinBlocks = TakesBThroughL1<T>::value ? std::min(Math::kMaxBlocksThroughL1, kSharedBlocks)
                                    : Math::kRegisterLight    ? std::min(3, kSharedBlocks)
                                                              : 1;
};

// A panel copied in place: nothing to hold.
struct NoUnitCursor {
  __device__ NoUnitCursor(const OperandView&, std::int64_t, std::int64_t, int, int) {}
};

// Math::kUnits: B's panel is copied as raw 16-byte units (its rows are not 16-byte aligned; see the top of the file).
template <class T, class Math, bool kSplitK>
__global__ void __launch_bounds__(T::threads, SkinnyLayout<T, Math>::kMinBlocks)
    skinny_gemm_kernel(OperandView a, OperandView b, EpilogueParams e, SplitK split) {
  using L = SkinnyLayout<T, Math>;
  struct BLayout {
    __device__ static int offset(int c, int kk) { return kk * Math::kBStride + c; }
  };
  struct ALayout {
    __device__ static int offset(int r, int kk) { return r * Math::kAStride + kk; }
  };
  extern __shared__ float4 shared_mem[];
  float* const smem = reinterpret_cast<float*>(shared_mem);
  const int tid = threadIdx.x;
  const BlockTile block = grouped_block_tile(T::bm, T::bn, e.m, e.n);

  const ChunkCursor<T::bn, T::bk, T::threads> cursor_b(b, false, block.col0, tid);
  const bool loads_a = tid < L::kALoaders;
  const ChunkCursor<T::bm, T::bk, L::kALoaders, true> cursor_a(a, true, block.row0, loads_a ? tid : 0);
  constexpr bool kClusterK = T::cluster > 1;  // k split over the blocks of a cluster (kernels/cluster_split_k.cuh)
  const KTileRange k_range =
      slice_k_tiles<kSplitK || kClusterK>(static_cast<int>((a.k + T::bk - 1) / T::bk), split.slices);
  const int k_tiles = k_range.end - k_range.begin;
  const std::int64_t k_first = std::int64_t{k_range.begin} * T::bk;
  constexpr bool kUnitsB = Math::kUnits;
  using Units =
      std::conditional_t<kUnitsB, UnitCursor<T::bk, T::bn, Math::kBStride, T::threads, true>, NoUnitCursor>;
  const Units units_b(b, block.col0, k_first, T::bk, tid);
  const RowShifts shift = kUnitsB ? RowShifts(b, block.col0) : RowShifts();
  constexpr ptx::CopyPath kBPath = TakesBThroughL1<T>::value ? ptx::CopyPath::ThroughL1 : ptx::CopyPath::BypassL1;
  const auto load_stage = [&](int t) {
    float* const stage = smem + (t % T::stages) * L::kStageFloats;
    const std::int64_t k0 = k_first + std::int64_t{t} * T::bk;
    if constexpr (kUnitsB)
      units_b.template load<kBPath>(stage, b, t);
    else
      load_tile_async<BLayout, kBPath, /*kVec4=*/true>(stage, cursor_b, b, k0);  // B's units kernel takes the rest
    if (loads_a) load_tile_async<ALayout>(stage + L::kBFloats, cursor_a, a, k0);
  };
  // Groups are committed even when empty, so wait_group's count always means "all but the newest stages − 2".
#pragma unroll
  for (int t = 0; t < T::stages - 1; ++t) {
    if (t < k_tiles) load_stage(t);
    ptx::cp_async_commit();
  }

  typename Math::Acc acc = {};
#pragma unroll 1
  for (int t = 0; t < k_tiles; ++t) {
    ptx::cp_async_wait<T::stages - 2>();
    // Tile t is in for every thread, and every thread is done with tile t − 1, whose stage the next load refills.
    __syncthreads();
    if (t + T::stages - 1 < k_tiles) load_stage(t + T::stages - 1);
    ptx::cp_async_commit();
    const float* const stage = smem + (t % T::stages) * L::kStageFloats;
    Math::chunk(acc, stage, stage + L::kBFloats, tid, shift);
  }
  ptx::cp_async_wait<0>();
  __syncthreads();  // the pipeline's bytes become the math's sums and the output tile

  using Output = typename L::Output;
  float* const tile = smem + Math::kSumFloats;
  Math::template to_tile<Output>(acc, smem, tile, tid);
  if constexpr (kClusterK) {
    using Sum = ClusterLeaderSum<Output, T::bm, T::bn, T::threads, T::cluster>;
    if (split.slices > 1 && !Sum::sum(tile, split.slices, tid)) return;
  } else if constexpr (kSplitK) {
    if (!gather_skinny_split_k<Output, T::bm, T::bn, T::threads>(tile, split, tid)) return;
  }
  Output::finish(tile, e, block, tid);
}

template <class T, class Math>
void launch_skinny_split_or_not(const GemmProblem& p, const GemmOperands& x, int slices,
                                const LaunchScratch& scratch, cudaStream_t s) {
  constexpr std::size_t kBytes = SkinnyLayout<T, Math>::kBytes;
  if constexpr (T::cluster > 1) {
    launch_skinny_cluster<&skinny_gemm_kernel<T, Math, false>, T, T::threads, kBytes>(p, x, slices, s);
  } else {
    if constexpr (!T::config().whole_k)
      if (slices > 1)
        return launch_skinny_tiles<&skinny_gemm_kernel<T, Math, true>, T, T::threads, kBytes>(p, x, slices, scratch,
                                                                                              s);
    launch_skinny_tiles<&skinny_gemm_kernel<T, Math, false>, T, T::threads, kBytes>(p, x, 1, scratch, s);
  }
}

template <class T, template <class, bool> class Math>
void launch_skinny_units_or_not(const GemmProblem& p, const GemmOperands& x, int slices, const LaunchScratch& scratch,
                                cudaStream_t s) {
  if (operand_b(p, x).vec4) return launch_skinny_split_or_not<T, Math<T, false>>(p, x, slices, scratch, s);
  launch_skinny_split_or_not<T, Math<T, true>>(p, x, slices, scratch, s);
}

// f(tile) for the tile a launch for p runs: FFMA's 8-row tiles multiply only the rows p has, 1 or up to 4.
template <class T, template <class, bool> class Math, class F>
auto with_rows_for(const GemmProblem& p, F&& f) {
  if constexpr (std::is_same_v<Math<T, false>, FfmaMath<T, false>> && T::bm == 8) {
    if (p.m == 1) return f(RowsComputed<T, 1>{});
    if (p.m <= 4) return f(RowsComputed<T, 4>{});
  }
  return f(T{});
}

template <class T, template <class, bool> class Math>
void launch_skinny_gemm(const GemmProblem& p, const GemmOperands& x, int slices, const LaunchScratch& scratch,
                        cudaStream_t s) {
  with_rows_for<T, Math>(p, [&](auto tile) {
    launch_skinny_units_or_not<decltype(tile), Math>(p, x, slices, scratch, s);
  });
}

// Beyond 64 rows a tile of 8 or 16 reads B four or more times, and the tensor-core tiles win.
constexpr std::int64_t kSkinnyMaxRows = 64;

std::string skinny_problem_limits(const GemmProblem& p) {
  if (p.trans_a || p.trans_b)
    return "the skinny family reads A K-major and B MN-major: layout nn only, this problem is " + p.layout();
  if (p.m > kSkinnyMaxRows)
    return "the skinny family is for m up to " + std::to_string(kSkinnyMaxRows) + ", this problem has m = " +
           std::to_string(p.m);
  return "";
}

// bm × bn × bk, stages; wn = bn / 8 makes the 8 warps. FFMA: 16 rows keep FFMA below the B stream at 4.8 TB/s (64
// FFMAs per 16-byte load of B: 74 per SM per clock of the 128 it has); 8 rows halve the padding where m ≤ 8. 128
// columns give narrow n more tiles, 256 fewer lanes to add up. 32-row chunks fit two blocks per SM. On the H200, 6 and
// 8 stages ran no faster than 4 (ncu at 1×14336×11008: DRAM 77%, L2 throughput 89%: the stream, not latency, is the
// limit), and skipping a tile's padded rows inside the unrolled row loop made the 16-row tiles 10% slower; the 8-row
// tiles instead compile 1- and 4-row forms the launch picks by m (RowsComputed): at m = 1 and 4 with a cold L2 the
// 4-stage 8×128×64 and 8×256×32 ran 1.08-1.27x faster (8×256×32 at 1×32001×4096: 163 -> 128 us), 8×128×32 0.92-1.09x
// (the same in two runs; not chosen at these shapes either way). Through L1 at 3 stages the 8-row
// tiles stream m = 1 from three blocks per SM and m = 4 from two (80 registers spilled at 4 rows): 83-87% of
// 4.8 TB/s at m = 1 and 76-88% at m = 4 on the decode heads, where cuBLAS's GEMV streams 76-82%. 16 rows through L1
// (128 registers, two blocks) took 1.15-1.7x as long as 16×128×64_s4, whose FFMA issue is the limit at m = 16
// (50-53% of 4.8 TB/s: 19-20 TFLOP/s of the 38 that 16 rows need). (results/nvidia-h200/decode_fp32_rows_sweep.txt)
// Off L1 at two blocks per SM (16×128×32 and 16×256×16 at 4 stages, 128 registers, k split for both blocks) 16 rows
// reached 49.9-54.6%, 1.00-1.05x: more warps barely moved it (results/nvidia-h200/decode_m16_tries.txt).
// 64 and 32 columns (16 and 32 k-lanes) are for B panels too small to fill the GPU with 128-column tiles unsplit: at
// 5×4096×424 those are 32 tiles of 14 chunks, split 14 ways, a ticket and a 14-slice gather on a 7 µs path. On the
// H200 (results/nvidia-h200/decode_compiled_64col.txt) 8×32×128 whole-k was the fastest of all candidates at 1×1024×295
// and 4×2048×1024 (0.73-0.89x the best before, cuBLASLt's included), 8×64×64 split at 3×1024×4096 (0.92-0.93x), where
// B's k is long. Never the fastest, taken out: 8×64×64 through L1, 8×64×128 and 8×64×64 whole-k. Registry order is the
// first-use trial's guess order within a family (runtime.cpp, skinny_specialists), so the whole-k tile comes second.
// First, and last: 8×64×64 with k split over a cluster of up to 16 or 8 blocks ("_c16", "_c8";
// kernels/cluster_split_k.cuh ClusterLeaderSum): no partials, no ticket, no L2 round trips at the end of a call.
// Against its ticket twin on the H200 the faster of the two ran 1.03-1.30x as fast at all twelve shapes swept, and it
// was the fastest candidate of all where few column tiles meet a long k (8×64×1216: 4.10-4.35 us against 5.02-5.63
// before; 3×1024×4096 1.11x, 2×824×11008 1.12-1.15x, cold and warm; results/nvidia-h200/decode_cluster_k_sweep.txt).
// 16 blocks beat 8 at the first two and lost at the third (14.8 against 13.6 us). "_c16" ran 1.01-1.62x as fast as
// 8×128×32, the first guess before it, at all 14 shapes of m ≤ 8 in that file and in held-out seed 9801's sweep, so it
// is the first guess now, ahead of the whole-k tile (on GPUs without clusters the list starts at the whole-k tile).
// The same split over clusters of 8×128×32 in FFMA and mma and of mma's 16×128×32 was never the fastest there (once
// within 1.6%), and is not compiled.
//                                bm   bn  bk  wm  wn tm tn stages cluster
using SkinnyFfmaTiles = TileList<Tile<8, 64, 64, 8, 8, 0, 0, 4, 16>,
                                 WholeK<Tile<8, 32, 128, 8, 4, 0, 0, 4>>,
                                 Tile<8, 128, 32, 8, 16, 0, 0, 4>,
                                 Tile<8, 128, 64, 8, 16, 0, 0, 4>,
                                 Tile<16, 128, 64, 16, 16, 0, 0, 4>,
                                 Tile<8, 256, 32, 8, 32, 0, 0, 4>,
                                 Tile<16, 256, 32, 16, 32, 0, 0, 4>,
                                 Tile<8, 64, 64, 8, 8, 0, 0, 4>,
                                 BThroughL1<Tile<8, 128, 32, 8, 16, 0, 0, 3>>,
                                 BThroughL1<Tile<8, 256, 16, 8, 32, 0, 0, 3>>,
                                 Tile<8, 64, 64, 8, 8, 0, 0, 4, 8>>;
// mma: on the H200 (kernels/PERFORMANCE.md) 8 rows were the best of our kernels at m = 1-8 (3-7% ahead of FFMA's 8
// rows), 16 and 32 rows at some m of 9-32. 64 rows never were (8 warps issuing mma.sync fall behind the 64-row wgmma
// from m = 32). 256 columns read each row of B in 1 KB runs: with a cold L2, up to 1.16x the 128-column tiles at m ≤ 4
// and 16, 0.95-0.98x at others (results/nvidia-h200/decode_skinny_tiles_sweep.txt). What counts there is 3 blocks per
// SM: 8×256×32 at 2 stages was 2-4% faster still, at 3 stages (2 blocks) 5% slower, but at 2 stages its split
// instantiation spilled under the 80-register cap (9 unit copies a thread). 16-row chunks need 5: 72-78 registers.
// 8×512 (2 KB runs of a row, one block per SM) was 1.02-1.07x the rest at m = 1 and 4 of 0.5-0.8 GB vocabulary heads
// before the tiles through L1; 16×512, 8×1024, 16×1024 and 6 or 12 stages never stayed the fastest. Through L1, three
// blocks per SM of 3 stages (BThroughL1): 8 and 16 rows × 128 and 256 columns. Other L1 tiles that never were: 4 or 5
// stages of 16×128×32 (2 blocks), 16×128×16 at 4 and 6, 16×256×16 at 4, 8×512×16 at 3, 32×128×32 at 3
// (decode_weights_sweep.txt).
// 64 and 32 columns: as FFMA's, for B panels that 128-column tiles cannot spread over the GPU unsplit; 2 or 4 k groups.
// Whole-k 8×32×128 was the fastest at 5×4096×424 and 2×4096×768 (0.77-0.83x the best before), 8×64×128 and 16×32×128
// (B read once for 16 rows) at 16×3072×1024 (0.84-0.88x, the two within 1%); the 32-column ones second and third in
// the list, for the first-use trial. Never the fastest, taken out: 8×64×32 at 4 stages and through L1, 8×64×64 whole-k.
// Whole-k 16×64×128, the tile torch.compile's autotune picked at 14×3072×1024 (Triton: 4 warps, 5 stages), is ours
// 1-5% ahead of every other candidate at 14×5120×2048 and 16×8192×2048, and took 1.08-1.12x as long as 16×32×128 at
// 14-16×3072×1024; at 5 stages it was never faster (results/nvidia-h200/decode_compile_gap_sweep.txt). Last in the
// list: the trial reaches it late. 16×32×128 at 6 stages (173 KB, one block per SM) keeps 5 chunks of B in flight:
// 1.02-1.04x as fast as the 4-stage tile where its blocks fit one wave (16×4096×2048, 12×4096×4096), 1.15-1.17x the
// time where they take two (160 blocks at 14×5120×2048). Never the fastest, taken out: 16×32 tiles of Triton's 2 warps
// (1.42-2.05x) and of 4 (1.05-1.87x), 3 stages (two blocks per SM, as 4 already are) and k steps of 64
// (results/nvidia-h200/decode_block_warps_sweep.txt).
using SkinnyMmaTiles = TileList<Tile<8, 128, 32, 8, 16, 0, 0, 4>,
                                WholeK<Tile<16, 32, 128, 16, 4, 0, 0, 4>>,
                                WholeK<Tile<8, 32, 128, 8, 4, 0, 0, 4>>,
                                Tile<16, 128, 32, 16, 16, 0, 0, 4>,
                                Tile<32, 128, 32, 32, 16, 0, 0, 4>,
                                Tile<8, 256, 16, 8, 32, 0, 0, 4>,
                                Tile<16, 256, 32, 16, 32, 0, 0, 4>,
                                Tile<8, 512, 16, 8, 64, 0, 0, 4>,
                                BThroughL1<Tile<8, 128, 32, 8, 16, 0, 0, 3>>,
                                BThroughL1<Tile<16, 128, 32, 16, 16, 0, 0, 3>>,
                                BThroughL1<Tile<8, 256, 16, 8, 32, 0, 0, 3>>,
                                BThroughL1<Tile<16, 256, 16, 16, 32, 0, 0, 3>>,
                                WholeK<Tile<8, 64, 128, 8, 8, 0, 0, 4>>,
                                WholeK<Tile<16, 64, 128, 16, 8, 0, 0, 4>>,
                                WholeK<Tile<16, 32, 128, 16, 4, 0, 0, 6>>>;

// 3xtf32: the tiles through L1, for fp32-level accuracy where FFMA cannot keep up with B (m = 9-16).
using SkinnyMma3xTiles = TileList<BThroughL1<Tile<8, 128, 32, 8, 16, 0, 0, 3>>,
                                  BThroughL1<Tile<16, 128, 32, 16, 16, 0, 0, 3>>,
                                  BThroughL1<Tile<8, 256, 16, 8, 32, 0, 0, 3>>,
                                  BThroughL1<Tile<16, 256, 16, 16, 32, 0, 0, 3>>>;

// The blocks per SM a tile's slices count (skinny_slices): as many as its shared memory holds where it streams B
// through L1, which is what those tiles are built for; one for the others.
template <class T, template <class, bool> class Math>
constexpr int resident_blocks() {
  return TakesBThroughL1<T>::value ? SkinnyLayout<T, Math<T, true>>::kMinBlocks : 1;
}

template <class T, template <class, bool> class Math>
int skinny_tile_slices(const GemmProblem& p) {
  if constexpr (T::config().whole_k) return 1;
  return with_rows_for<T, Math>(p, [&](auto tile) {
    using R = decltype(tile);
    const int slices = skinny_slices<R, resident_blocks<R, Math>()>(p);
    return T::cluster > 1 ? std::min(slices, T::cluster) : slices;  // at most a cluster's blocks
  });
}

// Clusters of kernel K (tile R, math M) of R::cluster blocks the current GPU holds at once; 0: a launch would fail.
template <class R, class M>
int resident_clusters() {
  constexpr auto kKernel = &skinny_gemm_kernel<R, M, false>;
  constexpr std::size_t kBytes = SkinnyLayout<R, M>::kBytes;
  set_skinny_attributes_once<kKernel, kBytes, R::cluster>();
  const KernelLaunch launch(dim3(1, 1, R::cluster), dim3(1, 1, R::cluster), R::threads, kBytes, nullptr);
  int clusters = 0;
  GT_CUDA_CALL(cudaOccupancyMaxActiveClusters(&clusters, kKernel, &launch.config));
  return clusters;
}

// Every kernel a launch of tile T may run (launch_skinny_gemm: the rows computed by m, B read in place or as units)
// asked whether a whole cluster of it fits the GPU at once: a cluster of more than 8 blocks is a size the GPU need not
// hold (the H200 holds 16 of FFMA's 8×64×64), and where it cannot, the tile is refused before any launch (a first-use
// trial that launched it would fail as a whole). Asked once per device.
template <class T, template <class, bool> class Math>
std::string skinny_cluster_fits() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    const cudaError_t error = cudaGetLastError();  // clears it: asking is not a failure of later CUDA calls
    return std::string("no CUDA device to hold a thread-block cluster: ") + cudaGetErrorString(error);
  }
  static std::mutex mutex;
  static std::map<int, int> fewest_by_device;
  const std::lock_guard<std::mutex> lock(mutex);
  auto known = fewest_by_device.find(device);
  if (known == fewest_by_device.end()) {
    int fewest = std::numeric_limits<int>::max();
    try {
      for (const std::int64_t m : {std::int64_t{1}, std::int64_t{4}, std::int64_t{T::bm}}) {
        GemmProblem p;
        p.m = m;
        fewest = std::min(fewest, with_rows_for<T, Math>(p, [](auto tile) {
                            using R = decltype(tile);
                            return std::min(resident_clusters<R, Math<R, false>>(),
                                            resident_clusters<R, Math<R, true>>());
                          }));
      }
    } catch (const std::exception& e) {
      return std::string("could not ask whether this GPU holds a cluster of ") + std::to_string(T::cluster) +
             " blocks: " + e.what();
    }
    known = fewest_by_device.emplace(device, fewest).first;
  }
  if (known->second > 0) return "";
  return "this GPU cannot hold a cluster of " + std::to_string(T::cluster) + " blocks of this tile at once (" +
         std::to_string(T::threads) + " threads and up to " +
         std::to_string((std::max(SkinnyLayout<T, Math<T, false>>::kBytes, SkinnyLayout<T, Math<T, true>>::kBytes) +
                         1023) / 1024) +
         " KiB of shared memory each; cudaOccupancyMaxActiveClusters: 0): the tile's other variants run the problem";
}

template <class T, template <class, bool> class Math>
constexpr DeviceCheck cluster_fit_check() {
  if constexpr (T::cluster > 1)
    return &skinny_cluster_fits<T, Math>;
  else
    return nullptr;
}

template <template <class, bool> class Math, class... Tiles>
std::vector<CompiledVariant> compile_all(TileList<Tiles...>) {
  return {CompiledVariant{Tiles::config(), &launch_skinny_gemm<Tiles, Math>, false, &skinny_tile_slices<Tiles, Math>,
                          nullptr, cluster_fit_check<Tiles, Math>()}...};
}

}  // namespace

std::vector<CompiledVariant> skinny_variants() { return compile_all<FfmaMath>(SkinnyFfmaTiles{}); }

std::vector<CompiledVariant> skinny_mma_variants() { return compile_all<MmaMath>(SkinnyMmaTiles{}); }

std::vector<CompiledVariant> skinny_mma_3xtf32_variants() { return compile_all<Mma3xMath>(SkinnyMma3xTiles{}); }

FamilyLimits skinny_limits() { return {&skinny_problem_limits, nullptr}; }

}  // namespace gemmtune::kernels
