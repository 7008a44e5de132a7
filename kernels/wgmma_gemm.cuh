// Hopper wgmma families (sm_90a only), tf32 and 3xtf32: wgmma.mma_async with fp32 accumulators, fed by a
// warp-specialized TMA pipeline (or, for operands the copy engine cannot address, by a cp.async pipeline of the same
// tiles). kernels/wgmma_tf32_gemm.cu and kernels/wgmma_3xtf32_gemm.cu instantiate them (kSplit3x false and true).
//
// tf32 wgmma reads shared-memory operands K-major only, and NN's B is N-major. So the kernels compute the transposed
// product Yᵀ (n×m) = Bᵀ (n×k) · Aᵀ (k×m):
// - wgmma's B operand (shared memory, through a descriptor) is Aᵀ: an A tile (bm rows of m × 32 of k) is K-major as A
//   is stored, and lands straight in the canonical 128-byte-swizzle layout (TMA's 128B swizzle is that layout);
// - wgmma's A operand (registers) is the B tile, so any shared layout works: B's tile is copied as stored (k rows of n
//   for NN, n rows of k for NT), with rows padded so the fragment loads are free of bank conflicts. TMA pads for free:
//   its box is simply wider than the tile, and the extra columns (neighbouring data, or zeros past the edge) are
//   never read.
// D's rows are Y's columns: warpgroup w computes Y columns [64w, 64w + 64) of the block tile for all bm rows, one
// m64n{bm}k8 wgmma per k8 step. TN and TT would need Aᵀ N-major in shared memory, which tf32 wgmma cannot read:
// the staged twins copy such an A into m rows of k first (kernels/operand_staging.hpp).
//
// TMA pipeline: one extra producer warpgroup, one lane of which waits for a stage to be empty, announces its bytes on
// the stage's full barrier and issues the two tile copies; the consumer warpgroups wait on full barriers only, and
// each consumer warp releases a stage on its empty barrier once the wgmma group reading it is complete. No block-wide
// barrier in the main loop: a late warp delays only the stage it holds.
//
// Clustered variants (T::cluster = 2) pair blocks side by side along n. The pair's tiles have the same A tile, so each
// block's producer copies half of it into both blocks (multicast) and a stage is empty once every consumer warp of the
// pair released it. At 4096³ the 256×128 tile is bound by L2 throughput (76% of peak at 3.28 GB read); pairs cut
// that traffic to 2.82 GB, 398 → 355 µs in a development sweep (kernels/PERFORMANCE.md: how that moves with the
// clock).
//
// Consumer loop: the 4 k8 steps of a k tile form one wgmma group. The TMA kernel keeps two fragment buffers and one
// group queued behind the running one (details at its loop). The cp.async kernel waits for each group before the
// next: while the group runs, its warps load the next tile's fragments into plain registers, which become wgmma
// operands only after the group completes. Either way no wgmma input register is written while a group reading it
// is in flight, which would make ptxas serialize every wgmma (C7513), and no accumulator is touched between wgmmas
// (C7515). The shared-memory operand goes in as fp32 bits, which the tensor core truncates (−½ ulp on average); the
// register operand is rounded up in magnitude (+½ ulp on average), so a tf32 product errs by nothing on average.
//
// Where the output is large against the work (many tiles, short k: 4096×4096×256 has 8 k tiles per 128 KB output
// tile), the TMA kernel with two consumer warpgroups runs persistent: as many blocks as fit, each walking tiles in
// grouped_block_tile's order, with an epilogue that leaves the pipeline's shared memory alone, so the producer fills
// the pipeline with the next tile while the consumers finish this one. That epilogue goes out through the copy
// engine: each consumer warpgroup writes 16-row chunks of finished Y (and Z) into two small swizzled buffers and one
// lane issues bulk tensor stores, which return at once, so the stores drain while the next tile's k loop runs instead
// of every SM's stores falling in the same window between k loops. Otherwise (one wave of tiles, outputs the copy
// engine cannot address, dropout, one consumer warpgroup) a block computes one tile and finishes it through
// OutputTile in the pipeline's shared memory.
//
// 3xtf32 (kSplit3x): x = big + small with big = tf32(x) rounded to nearest and small = x − big (exact in fp32, then
// truncated to tf32 by the tensor core), and D += small·big + big·small + big·big, as the mma.sync family does
// (kernels/mma_gemm.cuh: why, and why the promotion below). The register operand is split in registers when it becomes
// an operand, from the raw bits loaded while the previous group ran. The shared operand is split once per block and k
// tile, not once per warpgroup: the producer warpgroup's three idle warps wait for the tile to land, round it to big in
// place, write small into a second swizzled A tile of the stage, and arrive on the stage's ready barrier, which the
// consumers wait on (the cp.async kernel's threads split the tile between two block barriers instead). A k tile's 12
// wgmmas go, kSplit3xPromoteSteps k8 steps (3 wgmmas each) at a time, into a fresh accumulator (scale-d = 0 on the
// first), small products first, and once a group is complete FADD adds it into the running sum, which no wgmma
// touches, and the k loop's sum is scaled back by what the truncations took (kernels/split3x_promotion.cuh). Each group
// is waited for before the next, so a warpgroup's tensor work pauses for the promotion; the other consumer
// warpgroup's group fills it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/cuda_call.hpp"
#include "kernels/cluster.cuh"
#include "kernels/kernel_launch.hpp"
#include "kernels/cluster_split_k.cuh"
#include "kernels/compiled_variant.hpp"
#include "kernels/epilogue.cuh"
#include "kernels/operand_staging.hpp"
#include "kernels/operand_view.cuh"
#include "kernels/output_tile.cuh"
#include "kernels/ptx.cuh"
#include "kernels/split3x_promotion.cuh"
#include "kernels/split_k.cuh"
#include "kernels/stream_k.cuh"
#include "kernels/tile_loader.cuh"
#include "kernels/tile_schedule.cuh"
#include "kernels/tma_operand.cuh"
#include "kernels/unit_loader.cuh"
#include "kernels/wgmma.cuh"
#include "kernels/wgmma_pipeline.cuh"

namespace gemmtune::kernels {

constexpr int kBk = 32;  // one 128-byte swizzle row of tf32 per A-tile row
// Split-k sums 16 of a thread's elements at a time (gather_split_k): all 64 at once spilled at the register caps.
constexpr int kGatherBatch = 16;

// An output chunk of the TMA kernel: 16 rows of Y × a warpgroup's 64 columns, as two boxes of 16 rows × 32 floats in
// the 128-byte swizzle (the copy engine reads that layout; a plain one would put the 4 row pairs a warp writes at once
// on the same banks).
constexpr int kOutputChunkRows = 16, kOutputBoxCols = 32;
constexpr std::uint32_t kOutputBoxBytes = kOutputChunkRows * kOutputBoxCols * sizeof(float);
constexpr std::uint32_t kOutputChunkBytes = 2 * kOutputBoxBytes;

// Float c of row r in rows of 32 floats laid out in the 128-byte swizzle (what TMA's SWIZZLE_128B writes and reads):
// 16-byte unit c / 4 of row r sits at unit (c / 4) ^ (r % 8).
__device__ __forceinline__ int swizzle_128b_offset(int r, int c) { return r * 32 + ((c / 4) ^ (r % 8)) * 4 + c % 4; }

// The A tile, bm rows × 32 floats in the 128B-swizzle K-major layout of wgmma::sw128_kmajor_descriptor.
template <int kRows>
struct SwizzledATile {
  static_assert(kRows % 8 == 0, "whole 8-row swizzle atoms");
  static_assert(kBk == 32, "one swizzle row per tile row");
  static constexpr int kFloats = kRows * kBk;
  __device__ static int offset(int r, int kk) { return swizzle_128b_offset(r, kk); }
};

// The B tile as stored, rows padded so a fragment load hits 32 distinct banks: NN is [k][bn + 8] (its 4 k rows sit
// 8 banks apart, × 8 consecutive n), NT is [n][32 + 4] (8 n rows 4 banks apart, × 4 consecutive k).
template <int kRows, bool kKMajor>
struct PaddedBTile {
  static_assert(kRows % 32 == 0, "the NN padding assumes rows of a multiple of 32 floats");
  static constexpr int kStride = kKMajor ? kBk + 4 : kRows + 8;
  static constexpr int kFloats = kKMajor ? kRows * kStride : kBk * kStride;
  __device__ static int offset(int r, int kk) { return kKMajor ? r * kStride + kk : kk * kStride + r; }
};

template <class T, bool kBKMajor, bool kSplit3x>
struct WgmmaLayout {
  static_assert(T::bk == kBk && T::wm == T::bm && T::wn == 16, "a warp owns 16 columns of Y × all bm rows, k tile 32");
  static_assert(T::bn % 64 == 0 && (T::bm == 64 || T::bm == 128 || T::bm == 192 || T::bm == 256),
                "m64 per warpgroup, n64/128/192/256 (kernels/wgmma.cuh spells out those)");
  static_assert(T::stages >= 3, "a stage for the running wgmma group, one for the next tile, one or more loading");
  using ATile = SwizzledATile<T::bm>;
  using BTile = PaddedBTile<T::bn, kBKMajor>;
  // B read by class of rows (kernels/row_classes.hpp), in the plain tile's rows, which have room for the shifts. NN:
  // class j's 4 rows of k (k0 + j, k0 + j + 8, ...) one after the other, in rows of bn + 8 floats (s_j < 8); a
  // fragment load's lanes read row i of 4 classes (t or t + 4) × 8 columns 4 apart (FragmentColumns), on banks
  // s_j + 4g + c (class boxes lie 4 rows = 0 mod 32 banks apart), so they differ wherever the classes' s_j % 4 do (n
  // odd), and where n % 4 == 2 two classes share them and their loads two banks. NT: class j's bn / 4 rows of n one
  // after the other, in rows of 36 floats (32 of k and s_j < 4); a warp's 8 columns 4 apart are one class's rows, one
  // after the other, so a load's banks are 4g + t + s_w.
  static constexpr int kClasses = row_classes(kBKMajor);
  // Each stage starts 1024-byte aligned, as the swizzle atoms of its A tiles need; 3xtf32 adds the small parts of A
  // as a second A tile after B.
  static constexpr int kSmallAOffset = (ATile::kFloats + BTile::kFloats + 255) / 256 * 256;
  static constexpr int kStageFloats = kSplit3x ? kSmallAOffset + ATile::kFloats : kSmallAOffset;
  static constexpr std::uint32_t kStageBytes = kStageFloats * sizeof(float);
  static constexpr std::size_t kPipelineBytes = std::size_t{T::stages} * kStageFloats * sizeof(float);
  static constexpr std::size_t kOutputBytes = OutputTile<T::bm, T::bn, T::threads>::kBytes;
  static constexpr std::size_t kAlignSlack = 1024;  // the dynamic shared base is only 16-byte aligned
  static constexpr std::size_t kSmemBytes =
      (kPipelineBytes > kOutputBytes ? kPipelineBytes : kOutputBytes) + kAlignSlack;
  // The TMA kernel: the pipeline (which one-tile blocks reuse for the output tile), then each consumer warpgroup's
  // two staging buffers for output chunks, then the pipeline's full, empty and (3xtf32) ready barriers, 8 bytes each.
  // Persistent runs (launch_wgmma_layout decides) are for two consumer warpgroups: one alone is better served by
  // two blocks per SM, which its ~120 registers allow without the staged epilogue's code.
  static constexpr bool kMayPersist = T::threads == 256;
  static_assert(!kSplit3x || kMayPersist,
                "3xtf32 holds a fresh accumulator too: two consumer warpgroups of 232 registers");
  static constexpr std::uint32_t kStagingOffset = kPipelineBytes;
  static constexpr std::uint32_t kStagingBytes = kMayPersist ? 2 * 2 * kOutputChunkBytes : 0;
  static constexpr std::uint32_t kBarrierOffset =
      kStagingOffset + kStagingBytes > kOutputBytes ? kStagingOffset + kStagingBytes : kOutputBytes;
  static constexpr int kBarriersPerStage = kSplit3x ? 3 : 2;
  static constexpr std::size_t kTmaSmemBytes = kBarrierOffset + kAlignSlack + kBarriersPerStage * 8 * T::stages;
  static constexpr std::uint32_t kTileBytes = (ATile::kFloats + BTile::kFloats) * sizeof(float);
};

// A consumer thread's register operand for one k tile (4 k8 steps × 4 registers), from fp32 bits of the B tile. tf32:
// rounded up in magnitude, against the truncation of the shared A tile (wgmma::to_tf32_operand_up: why). 3xtf32: big
// rounded to nearest (A's big is too) and small = x − big, left for the tensor core to truncate.
template <bool kSplit3x>
struct RegisterOperand {
  static constexpr int kSteps = kBk / 8;
  std::uint32_t big[kSteps][4];
  std::uint32_t small[kSplit3x ? kSteps : 1][4];

  __device__ void set(int step, int reg, std::uint32_t fp32_bits) {
    if constexpr (kSplit3x) {
      big[step][reg] = wgmma::to_tf32_operand(fp32_bits);
      small[step][reg] = __float_as_uint(__uint_as_float(fp32_bits) - __uint_as_float(big[step][reg] & 0xffffe000u));
    } else {
      big[step][reg] = wgmma::to_tf32_operand_up(fp32_bits);
    }
  }
};

// An A tile read in place (kernels/unit_loader.cuh: RegisterRows) into its swizzled shared tile; 3xtf32 splits on the
// way (as split_a_tile does), so the tile needs no pass of its own.
template <class ATile, class Rows, bool kSplit3x>
__device__ __forceinline__ void store_a_rows(const Rows& rows, float* tile, float* small) {
#pragma unroll
  for (int j = 0; j < Rows::kSeg; ++j) {
    const float4 x = rows.chunk(j);
    const int at = ATile::offset(rows.row, 4 * (rows.chunk0 + j));
    if constexpr (kSplit3x) {
      const auto big_of = [](float v) { return __uint_as_float(ptx::to_tf32_exact(v)); };
      const float4 big = make_float4(big_of(x.x), big_of(x.y), big_of(x.z), big_of(x.w));
      *reinterpret_cast<float4*>(tile + at) = big;
      *reinterpret_cast<float4*>(small + at) = make_float4(x.x - big.x, x.y - big.y, x.z - big.z, x.w - big.w);
    } else {
      *reinterpret_cast<float4*>(tile + at) = x;
    }
  }
}

// 3xtf32's split of a landed A tile by `count` threads, this one being `index`: big = tf32(x) in place (its low bits
// cleared, so the tensor core's truncation keeps it exact), small = x − big at the same offset of the small tile. The
// swizzle permutes whole 16-byte units, so an element-wise pass over the raw floats keeps it. The callers fence the
// writes for the async proxy before they hand the tiles on.
template <int kFloats>
__device__ __forceinline__ void split_a_tile(float* tile, float* small, int index, int count) {
  float4* const big4 = reinterpret_cast<float4*>(tile);
  float4* const small4 = reinterpret_cast<float4*>(small);
  for (int i = index; i < kFloats / 4; i += count) {
    const float4 x = big4[i];
    const float4 big = make_float4(__uint_as_float(ptx::to_tf32_exact(x.x)), __uint_as_float(ptx::to_tf32_exact(x.y)),
                                   __uint_as_float(ptx::to_tf32_exact(x.z)), __uint_as_float(ptx::to_tf32_exact(x.w)));
    big4[i] = big;
    small4[i] = make_float4(x.x - big.x, x.y - big.y, x.z - big.z, x.w - big.w);
  }
}

// One warpgroup's wgmma group for k8 steps [kFirst, kFirst + kCount) of one k tile, A through descriptors (k8 step s
// at +32·s bytes). tf32 adds into d; 3xtf32 overwrites d with those steps' sum, small products first while it is small.
template <int kRows, bool kSplit3x, int kFirst = 0, int kCount = RegisterOperand<kSplit3x>::kSteps>
__device__ __forceinline__ void issue_k_steps(float (&d)[kRows / 2], const RegisterOperand<kSplit3x>& b,
                                              std::uint64_t desc_a, std::uint64_t desc_small_a) {
  using Mma = wgmma::WgmmaTf32<kRows>;
  constexpr int kEnd = kFirst + kCount;
  static_assert(kEnd <= RegisterOperand<kSplit3x>::kSteps, "the steps lie within the k tile");
  const auto at_step = [](std::uint64_t desc, int s) { return desc + (8 * s * sizeof(float) >> 4); };
  wgmma::fence();
  if constexpr (kSplit3x) {
    Mma::template mma<false>(d, b.small[kFirst], at_step(desc_a, kFirst));
#pragma unroll
    for (int s = kFirst + 1; s < kEnd; ++s) Mma::mma(d, b.small[s], at_step(desc_a, s));
#pragma unroll
    for (int s = kFirst; s < kEnd; ++s) Mma::mma(d, b.big[s], at_step(desc_small_a, s));
  }
#pragma unroll
  for (int s = kFirst; s < kEnd; ++s) Mma::mma(d, b.big[s], at_step(desc_a, s));
  wgmma::commit_group();
}

// 3xtf32's k tile as kSplit3xPromoteSteps-step groups (kernels/split3x_promotion.cuh), one after the other: each
// issued into the fresh accumulator `part`, then `between(group)` (the caller's work that overlaps the group), the
// wait, `after_last()` once the last group is complete, and the promotion acc += part, in FADD (round to nearest).
template <int kRows, int kGroup = 0, class Between, class AfterLast>
__device__ __forceinline__ void promote_k_tile(float (&acc)[kRows / 2], float (&part)[kRows / 2],
                                               const RegisterOperand<true>& b, std::uint64_t desc_a,
                                               std::uint64_t desc_small_a, Between&& between, AfterLast&& after_last) {
  constexpr int kGroups = RegisterOperand<true>::kSteps / kSplit3xPromoteSteps;
  static_assert(RegisterOperand<true>::kSteps % kSplit3xPromoteSteps == 0, "whole groups per k tile");
  wgmma::fence_operands(part);
  issue_k_steps<kRows, true, kGroup * kSplit3xPromoteSteps, kSplit3xPromoteSteps>(part, b, desc_a, desc_small_a);
  wgmma::fence_operands(part);
  between(kGroup);
  wgmma::wait_group<0>();
  wgmma::fence_operands(part);
  if constexpr (kGroup + 1 == kGroups) after_last();
#pragma unroll
  for (int i = 0; i < kRows / 2; ++i) acc[i] += part[i];
  if constexpr (kGroup + 1 < kGroups)
    promote_k_tile<kRows, kGroup + 1>(acc, part, b, desc_a, desc_small_a, between, after_last);
}

// What a tile whose A rows do not fit in registers holds instead of RegisterRows: nothing (it is never fetched).
struct NoRegisterRows {
  __device__ NoRegisterRows(const OperandView&, std::int64_t, std::int64_t, int) {}
  __device__ void fetch(int) {}
};

// The block-tile columns of Y a consumer thread's register operand rows g and g + 8 hold (g = lane / 4; D's rows are
// Y's columns): frag_row and frag_row + 8 (frag_row = 16·warp + g), or, where B is read by class of rows
// (kernels/row_classes.hpp), 64·(warp / 4) + 4g + warp % 4 and 32 more. Columns 4 apart put a fragment load's 8 lanes
// of one class on banks 4 apart, and the classes' shifts (s_j % 4) fill the banks between.
template <bool kByClass>
struct FragmentColumns {
  static constexpr int kSecond = kByClass ? 32 : 8;  // the second column, from the first
  __device__ static int first(int warp, int g) { return kByClass ? 64 * (warp / 4) + 4 * g + warp % 4 : 16 * warp + g; }
};

// A consumer thread's accumulators into the output tile (D (row, col) = Y (col, row): Y rows 8i + 2t + q % 2,
// columns col + Columns::kSecond·(q / 2)). Where Y's rows are not 16-byte aligned and shift_base ≥ 0
// (Output::row_shift_base), each row lands at its shift with the bias added, so the epilogue stores whole 16-byte
// words; a thread needs two shifts, as 8i rows move a row's start in Y by a multiple of 4 floats.
template <class Output, int kYRows, class Columns>
__device__ __forceinline__ void put_accumulators(float* smem, const float (&acc)[kYRows / 2], int t, int col,
                                                 int shift_base, const EpilogueParams& e, BlockTile block) {
  constexpr int kSecond = Columns::kSecond;
  if (shift_base < 0) {
#pragma unroll
    for (int i = 0; i < kYRows / 8; ++i)
#pragma unroll
      for (int q = 0; q < 4; ++q) Output::put(smem, 8 * i + 2 * t + q % 2, col + kSecond * (q / 2), acc[4 * i + q]);
    return;
  }
  const int shift[2] = {Output::row_shift(shift_base, 2 * t, e.n), Output::row_shift(shift_base, 2 * t + 1, e.n)};
  float bias[2] = {0.f, 0.f};
#pragma unroll
  for (int j = 0; j < 2; ++j)
    if (e.bias && block.col0 + col + kSecond * j < e.n) bias[j] = __ldg(e.bias + block.col0 + col + kSecond * j);
#pragma unroll
  for (int i = 0; i < kYRows / 8; ++i)
#pragma unroll
    for (int q = 0; q < 4; ++q)
      Output::put(smem, 8 * i + 2 * t + q % 2, col + kSecond * (q / 2) + shift[q % 2], acc[4 * i + q] + bias[q / 2]);
}

// kSplitK: blockIdx.z is a slice of k (kernels/split_k.cuh), in both kernels.
template <class T, bool kBKMajor, bool kSplit3x, bool kSplitK>
__global__ void __launch_bounds__(T::threads)
    wgmma_tf32_kernel(OperandView a, OperandView b, EpilogueParams e, SplitK split) {
  using Layout = WgmmaLayout<T, kBKMajor, kSplit3x>;
  using ATile = typename Layout::ATile;
  using BTile = typename Layout::BTile;
  constexpr int kStages = T::stages, kSteps = kBk / 8;

  extern __shared__ float4 shared_mem[];
  const std::uint32_t raw_base = ptx::smem_address(shared_mem);
  const std::uint32_t smem_base = (raw_base + 1023) & ~1023u;
  float* const smem = reinterpret_cast<float*>(reinterpret_cast<char*>(shared_mem) + (smem_base - raw_base));

  const int tid = threadIdx.x, lane = tid % 32;
  const int frag_row = tid / 32 * 16 + lane / 4;  // block-tile column of Y in a[0]/a[2] and d[4i], d[4i+1]; +8: others
  const int t = lane % 4;
  const BlockTile block = grouped_block_tile(T::bm, T::bn, e.m, e.n);
  const KTileRange k_range = slice_k_tiles<kSplitK>(static_cast<int>((a.k + kBk - 1) / kBk), split.slices);
  const int k_tiles = k_range.end - k_range.begin;

  const ChunkCursor<T::bm, kBk, T::threads, /*kKMajorOnly=*/true> cursor_a(a, true, block.row0, tid);
  const ChunkCursor<T::bn, kBk, T::threads> cursor_b(b, kBKMajor, block.col0, tid);
  // In place (kernels/unit_loader.cuh) where rows are not 16-byte aligned: B's tile rows are copied as whole aligned
  // units (its padding holds the extra one) and the fragment loads read them at this thread's shift (with k tiles of
  // 32, every B row a thread reads has the same); an A without 16-byte rows is fetched into registers a k tile ahead
  // and stored shifted into the swizzled tile. Only tiles whose threads each hold half an A row (128×128, 64×64: 5
  // units, 20 registers) do: in the H200 sweep of kernels/PERFORMANCE.md ("Unaligned rows read in place") they ran
  // 0.96-1.31x the 4-byte copies' time, while a whole row per thread (256×128 s4: spills; 128×64) ran 0.77-0.94x and
  // a quarter row (64×128) 0.85-1.26x. The others keep the 4-byte copies.
  constexpr bool kInPlace = T::bm * (kBk / 4) / T::threads == 4;
  using ARows = std::conditional_t<kInPlace, RegisterRows<T::bm, kBk, T::threads>, NoRegisterRows>;
  const bool a_regs = kInPlace && !a.vec4;
  const std::int64_t k_first = std::int64_t{k_range.begin} * kBk;
  ARows rows_a(a, block.row0, k_first, tid);
  const UnitCursor<kBKMajor ? T::bn : kBk, kBKMajor ? kBk : T::bn, BTile::kStride, T::threads, !kBKMajor> raw_b(
      b, block.col0, k_first, kBk, tid);
  const int b_shift = !kInPlace ? 0
                      : kBKMajor ? unit_shift(b.ptr + (block.col0 + frag_row) * b.ld)
                                 : unit_shift(b.ptr + std::int64_t{t} * b.ld + block.col0);
  auto load_stage = [&](int kt) {
    float* const stage = smem + (kt % kStages) * Layout::kStageFloats;
    const std::int64_t k0 = std::int64_t{k_range.begin + kt} * kBk;
    if (!a_regs) load_tile_async<ATile>(stage, cursor_a, a, k0);
    if constexpr (kInPlace)
      raw_b.load(stage + ATile::kFloats, b, kt);
    else
      load_tile_async<BTile>(stage + ATile::kFloats, cursor_b, b, k0);
  };
  // Tile kt's A, fetched a k tile earlier, into its stage (3xtf32: split there).
  auto store_a = [&](int kt) {
    if constexpr (kInPlace) {
      float* const stage = smem + (kt % kStages) * Layout::kStageFloats;
      store_a_rows<ATile, ARows, kSplit3x>(rows_a, stage, stage + Layout::kSmallAOffset);
    }
  };

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) load_stage(s);
    ptx::cp_async_commit();  // empty groups keep the wait count uniform
  }

  // Raw fp32 bits of one tile's fragments, loaded while the previous tile's wgmma group runs; they become wgmma
  // operands (wgmma::to_tf32_operand) only once that group is complete.
  std::uint32_t loaded[kSteps][4];
  auto load_fragments = [&](int kt) {
    const float* const tile_b = smem + (kt % kStages) * Layout::kStageFloats + ATile::kFloats + b_shift;
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      loaded[s][0] = __float_as_uint(tile_b[BTile::offset(frag_row, 8 * s + t)]);
      loaded[s][1] = __float_as_uint(tile_b[BTile::offset(frag_row + 8, 8 * s + t)]);
      loaded[s][2] = __float_as_uint(tile_b[BTile::offset(frag_row, 8 * s + t + 4)]);
      loaded[s][3] = __float_as_uint(tile_b[BTile::offset(frag_row + 8, 8 * s + t + 4)]);
    }
  };
  // Makes tile kt visible to every warp and to the tensor cores' async proxy; 3xtf32 then splits its A tile, every
  // thread a part, and publishes that (an A stored from registers was split on the way).
  auto publish_tile = [] {
    wgmma::fence_async_shared();
    __syncthreads();
  };
  auto prepare_tile = [&](int kt) {
    publish_tile();
    if constexpr (kSplit3x) {
      if (a_regs) return;
      float* const stage = smem + (kt % kStages) * Layout::kStageFloats;
      split_a_tile<ATile::kFloats>(stage, stage + Layout::kSmallAOffset, tid, T::threads);
      publish_tile();
    }
  };

  if (a_regs) {
    rows_a.fetch(0);
    store_a(0);
    if (k_tiles > 1) rows_a.fetch(1);
  }
  ptx::cp_async_wait<kStages - 2>();
  prepare_tile(0);
  load_fragments(0);

  float acc[T::bm / 2], part[kSplit3x ? T::bm / 2 : 1];
#pragma unroll
  for (int i = 0; i < T::bm / 2; ++i) acc[i] = 0.f;
#pragma unroll
  for (int i = 0; i < (kSplit3x ? T::bm / 2 : 1); ++i) part[i] = 0.f;
  for (int kt = 0; kt < k_tiles; ++kt) {
    RegisterOperand<kSplit3x> frags;
#pragma unroll
    for (int s = 0; s < kSteps; ++s)
#pragma unroll
      for (int q = 0; q < 4; ++q) frags.set(s, q, loaded[s][q]);
    const std::uint32_t stage_address = smem_base + (kt % kStages) * Layout::kStageBytes;
    const std::uint64_t desc = wgmma::sw128_kmajor_descriptor(stage_address);
    // While the (first) group runs: prepare tile kt + 1, refill the stage tile kt − 1 used (every warpgroup finished
    // that group before the barrier), and load the next fragments.
    const auto next_tile = [&] {
      if (kt + 1 >= k_tiles) return;
      if (a_regs) {
        store_a(kt + 1);  // its stage's last reader, tile kt + 1 - kStages, finished at least two k tiles ago
        if (kt + 2 < k_tiles) rows_a.fetch(kt + 2);
      }
      ptx::cp_async_wait<kStages - 3>();
      prepare_tile(kt + 1);
      if (kt + kStages - 1 < k_tiles) load_stage(kt + kStages - 1);
      ptx::cp_async_commit();
      load_fragments(kt + 1);
    };
    if constexpr (kSplit3x) {
      promote_k_tile<T::bm>(
          acc, part, frags, desc, wgmma::sw128_kmajor_descriptor(stage_address + Layout::kSmallAOffset * sizeof(float)),
          [&](int group) {
            if (group == 0) next_tile();
          },
          [] {});
    } else {
      wgmma::fence_operands(acc);
      issue_k_steps<T::bm, false>(acc, frags, desc, desc);
      wgmma::fence_operands(acc);
      next_tile();
      wgmma::wait_group<0>();
    }
  }
  wgmma::fence_operands(acc);
  if constexpr (kSplit3x) {
#pragma unroll
    for (int i = 0; i < T::bm / 2; ++i) acc[i] = split3x_unshrink(acc[i]);
  }

  using Output = OutputTile<T::bm, T::bn, T::threads>;
  ptx::cp_async_wait<0>();
  __syncthreads();  // every warp is done with the pipeline's shared memory before it holds the output tile
  const int shift_base = kSplitK ? -1 : Output::row_shift_base(e, block);  // split-k gathers the tile as put() lays it
  put_accumulators<Output, T::bm, FragmentColumns<false>>(smem, acc, t, frag_row, shift_base, e, block);
  __syncthreads();
  if constexpr (kSplitK)
    if (!gather_split_k<Output, T::bm, T::bn, T::threads, kGatherBatch>(smem, split, tid)) return;
  if (shift_base >= 0)
    Output::finish_shifted(smem, e, block, tid, shift_base);
  else
    Output::finish(smem, e, block, tid);
}

// The TMA kernel's epilogue for row-major Y (and Z) that the copy engine can address (16-byte aligned, n % 4 == 0)
// and no dropout. A consumer warpgroup's accumulators are Y rows 0..kRows of its 64 columns; it finishes them 16 rows
// at a time into one of its two chunk buffers and its first lane stores the chunk with two bulk tensor copies. Before
// refilling a buffer, that lane waits until the copy engine has read the chunk stored from it two chunks earlier.
template <int kRows>
struct StagedOutput {
  static constexpr int kChunks = kRows / kOutputChunkRows;
  static_assert(kRows % kOutputChunkRows == 0 && kChunks % 2 == 0, "whole chunks, an even number per pass");
  static_assert(kOutputBoxCols == 32, "a box row is one 128-byte swizzle row");

  // acc[4i + q] is Y (8i + 2t + q % 2, col + 8(q / 2)) of the block tile; bias[j] is column col + 8j's. acc ends up
  // holding Z. A chunk's 8 values are finished (activation: two multi-function-unit ops each) just before its buffer
  // is waited for, so the two warpgroups' exp2/rcp work spreads over the chunks' barrier waits instead of running as
  // one burst, bound by the multi-function units, before the first store.
  template <Activation kAct>
  __device__ static void store(float (&acc)[kRows / 2], const float (&bias)[2], const EpilogueParams& e,
                               const CUtensorMap& map_y, const CUtensorMap& map_z, BlockTile block, float* staging,
                               int warpgroup, int col, int t) {
    const bool leader = threadIdx.x % 128 == 0;
    const int x0 = static_cast<int>(block.col0) + 64 * warpgroup, y0 = static_cast<int>(block.row0);
    const auto pass = [&](const CUtensorMap& map, auto finish) {
#pragma unroll
      for (int chunk = 0; chunk < kChunks; ++chunk) {
        float values[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) values[i] = finish(acc[8 * chunk + i]);
        float* const buffer = staging + chunk % 2 * (kOutputChunkBytes / sizeof(float));
        if (leader) pipeline::bulk_wait_group_read<1>();
        pipeline::sync_warpgroup(warpgroup);
#pragma unroll
        for (int half = 0; half < 2; ++half)
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            const int r = 8 * half + 2 * t + q % 2, c = col % 64 + 8 * (q / 2);
            const int box = c / kOutputBoxCols;
            buffer[box * (kOutputBoxBytes / sizeof(float)) + swizzle_128b_offset(r, c % kOutputBoxCols)] =
                values[4 * half + q];
          }
        wgmma::fence_async_shared();  // the copy engine reads through the async proxy
        pipeline::sync_warpgroup(warpgroup);
        if (leader) {
          const std::uint32_t source = ptx::smem_address(buffer);
          pipeline::tma_store_2d(map, source, x0, y0 + kOutputChunkRows * chunk);
          pipeline::tma_store_2d(map, source + kOutputBoxBytes, x0 + kOutputBoxCols, y0 + kOutputChunkRows * chunk);
          pipeline::bulk_commit_group();
        }
      }
    };
#pragma unroll
    for (int i = 0; i < kRows / 2; ++i) acc[i] += bias[i % 4 / 2];
    if (e.z) pass(map_z, [](float z) { return z; });
    pass(map_y, [&](float z) { return fast::activation<kAct>(z, e.leaky_slope); });
  }

  // Call once the warpgroup has stored its last chunk: its buffers stay in use until the copy engine has read them.
  __device__ static void drain() {
    if (threadIdx.x % 128 == 0) pipeline::bulk_wait_group_read<0>();
  }
};

// The split-k barrier of the TMA kernel (gather_split_k): the consumer warpgroups, which hold the output tile.
template <int kThreads>
struct ConsumerBarrier {
  __device__ void operator()() const { pipeline::sync_first_threads<kThreads>(); }
};

// The producer is a whole warpgroup after the T::threads consumers, although one lane does its work: registers are
// allocated per scheduler, whose share of a block is one warp of each warpgroup, so a lone producer warp would cost
// as much. With two consumer warpgroups the producer hands its registers over (setmaxnreg): the cap at entry is
// 65536 / 384 = 168, the producer drops to 40 and the consumers rise to 232 (3 warps × 32 lanes per scheduler:
// 40 + 2 × 232 ≤ 512 registers each), room for m64n256's 128 accumulators. One consumer warpgroup of m64n64 or
// m64n128 is capped at 128 registers, which it fits, so that two blocks share an SM.
//
// kClusterSlices > 1: the split-k slices of a tile (blockIdx.z) run as one cluster and add their partial tiles in
// distributed shared memory (kernels/cluster_split_k.cuh), each block a share of the rows, instead of leaving them in
// global memory for the last block (split_k.cuh). That last block's gather was latency-bound: at 176×4096×4096 the
// 192×128 tile split four ways took 51 µs, against 28 µs for the same blocks' work unsplit (176×16384×1024).
//
// kSplitK with a cluster of two: the pair shares its A tile along n for its slice's k tiles, as an unsplit pair does,
// and each block leaves its partial to split_k.cuh's tickets (one per block, blockIdx.x). Where m is a few hundred
// rows and k long, split blocks wait on L2 more than on the tensor cores: at 774×768×13824 the 128×128 split3 blocks
// read ~590 MB through L2 (by count) in 89 µs, 6.6 TB/s, at 37% of the dense tf32 peak; a pair reads a quarter less.
//
// kBByClass: B is read by class of rows (kernels/row_classes.hpp), in op_b's Layout::kClasses maps; else op_b.map[0]
// is all of B. A template parameter, not a run-time flag: with the flag the aligned tiles ran 0-3% slower.
//
// kStreamK: the grid's blocks split the k tiles of all output tiles among them (kernels/stream_k.cuh), with `split`'s
// scratch holding the shares' partials and tickets; every tile is stored through the staged epilogue.
template <class T, bool kBKMajor, bool kSplit3x, bool kSplitK, bool kBByClass, int kClusterSlices = 1,
          bool kStreamK = false>
__global__ void __launch_bounds__(T::threads + 128, T::threads == 128 && T::bm <= 128 ? 2 : 1)
    wgmma_tf32_tma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ TmaOperand op_b,
                          const __grid_constant__ CUtensorMap map_y, const __grid_constant__ CUtensorMap map_z,
                          std::int64_t k, EpilogueParams e, SplitK split) {
  using Layout = WgmmaLayout<T, kBKMajor, kSplit3x>;
  using ATile = typename Layout::ATile;
  using BTile = typename Layout::BTile;
  constexpr int kStages = T::stages, kSteps = kBk / 8, kConsumerWarps = T::threads / 32, kCluster = T::cluster;
  constexpr bool kMoveRegisters = T::threads == 256;
  constexpr bool kMayPersist = Layout::kMayPersist;
  constexpr int kSplitterWarps = 3;  // 3xtf32: the producer warpgroup's warps 1-3 split A tiles
  static_assert(kCluster == 1 || (kCluster == 2 && kMayPersist), "clusters of two, for two consumer warpgroups");
  static_assert(kClusterSlices == 1 || (kSplitK && kCluster == 1), "a cluster of slices is a split-k launch");
  static_assert(!kStreamK || (kMayPersist && kCluster == 1 && !kSplitK && !kSplit3x && !kBByClass),
                "Stream-K stores every tile through the staged epilogue (two consumer warpgroups, fragments in its "
                "columns), one block per tile share (no pairs, no slices), tf32");
  constexpr std::uint32_t kASliceBytes = ATile::kFloats / kCluster * sizeof(float);
  constexpr int kClasses = Layout::kClasses;
  constexpr std::uint32_t kBClassBytes = BTile::kFloats / kClasses * sizeof(float);
  constexpr std::uint16_t kClusterMask = (1u << kCluster) - 1;

  extern __shared__ float4 shared_mem[];
  const std::uint32_t raw_base = ptx::smem_address(shared_mem);
  const std::uint32_t smem_base = (raw_base + 1023) & ~1023u;
  float* const smem = reinterpret_cast<float*>(reinterpret_cast<char*>(shared_mem) + (smem_base - raw_base));
  const std::uint32_t barriers = smem_base + Layout::kBarrierOffset;
  const auto full = [barriers](int stage) { return barriers + 8u * static_cast<std::uint32_t>(stage); };
  const auto empty = [barriers](int stage) { return barriers + 8u * static_cast<std::uint32_t>(kStages + stage); };
  const auto ready = [barriers](int stage) { return barriers + 8u * static_cast<std::uint32_t>(2 * kStages + stage); };

  const int tid = threadIdx.x;
  // A split block's k tiles are its slice's, which may be none.
  const KTileRange k_range = slice_k_tiles<kSplitK>(static_cast<int>((k + kBk - 1) / kBk), split.slices);
  // A cluster works on cluster tiles of bm × kCluster·bn, its blocks side by side along n: they share the A tile, and
  // each copies its slice of it into all of them. A block whose tile lies past n still copies its slice; its B
  // arrives as zeros and its stores fall outside Y, where the copy engine drops them.
  const std::int64_t tiles = (e.m + T::bm - 1) / T::bm * ((e.n + kCluster * T::bn - 1) / (kCluster * T::bn));
  const std::int64_t first_tile = blockIdx.x / kCluster, tile_step = gridDim.x / kCluster;
  const int rank = kCluster > 1 ? static_cast<int>(cluster::rank()) : 0;
  const auto block_tile = [&](std::int64_t tile) {
    BlockTile block = grouped_tile(tile, T::bm, kCluster * T::bn, e.m, e.n);
    block.col0 += std::int64_t{rank} * T::bn;
    return block;
  };
  const StreamKSchedule stream_k(tiles, static_cast<int>((k + kBk - 1) / kBk), static_cast<int>(gridDim.x),
                                 split.streamed_blocks);
  // The block's shares of output tiles, in the order it computes them: whole tiles from first_tile in steps of
  // tile_step (each its slice's k tiles where split), or Stream-K's.
  const auto for_each_share = [&](auto&& f) {
    if constexpr (kStreamK)
      stream_k.for_each_share(static_cast<int>(blockIdx.x), f);
    else
      for (std::int64_t tile = first_tile; tile < tiles; tile += tile_step)
        f(TileShare{tile, k_range.begin, k_range.end});
  };

  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      pipeline::mbarrier_init(full(s), 1);  // the producer's arrive.expect_tx; the copies' bytes
      // One arrival per consumer warp of the cluster: a stage takes every block's copies, so it is empty only when
      // every block is done with it.
      pipeline::mbarrier_init(empty(s), kCluster * kConsumerWarps);
      if constexpr (kSplit3x) pipeline::mbarrier_init(ready(s), kSplitterWarps);  // this block's split of A is done
    }
    pipeline::fence_barrier_init();
  }
  if constexpr (kCluster > 1)
    cluster::sync();  // no copy or arrival reaches another block's barriers before they are initialized
  else
    __syncthreads();
  ptx::wait_for_previous_grid();  // where launched behind the kernel before: its writes (a staged variant's copies)

  // Producer and consumers count k tiles across all of the block's tiles: k tile g uses stage g % kStages in that
  // stage's phase g / kStages, so the next tile's copies start as soon as this tile's last stages are released.
  if (tid >= T::threads) {
    if constexpr (kMoveRegisters) pipeline::release_registers<40>();
    if (tid == T::threads) {
      int g = 0;
      for_each_share([&](const TileShare& share) {
        const BlockTile block = block_tile(share.tile);
        const int row0 = static_cast<int>(block.row0), col0 = static_cast<int>(block.col0);
        for (int kt = share.k_begin; kt < share.k_end; ++kt, ++g) {
          const int s = g % kStages;
          if (g >= kStages) pipeline::mbarrier_wait(empty(s), (g / kStages - 1) & 1);
          const std::uint32_t stage = smem_base + static_cast<std::uint32_t>(s) * Layout::kStageBytes;
          const std::uint32_t stage_b = stage + ATile::kFloats * sizeof(float);
          // Every slice of A lands here.
          pipeline::mbarrier_arrive_expect_tx(full(s), Layout::kTileBytes);
          const int k0 = kt * kBk;
          if constexpr (kCluster > 1)
            pipeline::tma_multicast_2d(stage + static_cast<std::uint32_t>(rank) * kASliceBytes, map_a, full(s), k0,
                                       row0 + rank * (T::bm / kCluster), kClusterMask);
          else
            pipeline::tma_load_2d(stage, map_a, full(s), k0, row0);
          if constexpr (kBKMajor && !kBByClass) {
            pipeline::tma_load_2d(stage_b, op_b.map[0], full(s), k0, col0);
          } else if constexpr (kBKMajor) {
#pragma unroll
            for (int j = 0; j < kClasses; ++j)
              pipeline::tma_load_2d(stage_b + static_cast<std::uint32_t>(j) * kBClassBytes, op_b.map[j], full(s), k0,
                                    col0 / kClasses);
          } else if constexpr (!kBByClass) {
            pipeline::tma_load_2d(stage_b, op_b.map[0], full(s), col0, k0);
          } else {
#pragma unroll
            for (int j = 0; j < kClasses; ++j)
              pipeline::tma_load_2d(stage_b + static_cast<std::uint32_t>(j) * kBClassBytes, op_b.map[j], full(s), col0,
                                    k0 / kClasses);
          }
        }
      });
      // The other blocks' consumers arrive on this block's empty barriers until they are done with its last stages:
      // the block must not exit before (the barriers would be gone).
      if constexpr (kCluster > 1)
        for (int last = g > kStages ? g - kStages : 0; last < g; ++last)
          pipeline::mbarrier_wait(empty(last % kStages), (last / kStages) & 1);
    } else if (kSplit3x && tid >= T::threads + 32) {
      // The splitters follow the copies stage by stage. They cannot fall a phase behind: a stage is refilled only
      // after the consumers released it, which they do only after its ready barrier.
      const int splitter = tid - (T::threads + 32);
      int g = 0;
      for_each_share([&](const TileShare& share) {
        for (int kt = share.k_begin; kt < share.k_end; ++kt, ++g) {
          const int s = g % kStages;
          pipeline::mbarrier_wait(full(s), (g / kStages) & 1);
          float* const stage = smem + s * Layout::kStageFloats;
          split_a_tile<ATile::kFloats>(stage, stage + Layout::kSmallAOffset, splitter, 32 * kSplitterWarps);
          wgmma::fence_async_shared();
          __syncwarp();
          if (tid % 32 == 0) pipeline::mbarrier_arrive(ready(s));
        }
      });
    }
    if constexpr (kClusterSlices > 1) {
      __syncwarp();
      cluster::sync();  // the two barriers of ClusterSplitK::finish, which the consumers run
      cluster::sync();
    }
  } else {
    if constexpr (kMoveRegisters) pipeline::claim_registers<232>();
    const int lane = tid % 32, t = lane % 4;
    const int frag_row = tid / 32 * 16 + lane / 4;  // block-tile column of Y in a[0]/a[2], d[4i], d[4i+1]; +8: others
    // Two fragment buffers: tile kt + 1's operands are loaded while group kt runs and group kt − 1 is complete, so
    // one group stays queued behind the running one and the tensor core never drains between k tiles. The buffer
    // index must be a compile-time constant (a run-time one moves the array to local memory): hence the
    // integral_constant and the loop unrolled by two.
    using Columns = FragmentColumns<kBByClass>;
    const int first_column = Columns::first(tid / 32, lane / 4);
    // Where this thread's first B float (its first column, k row t) is. NN: k row t in the plain tile, or in the tile
    // by class class t's first row, s_t floats right. NT: row first_column of the plain tile, or by class row
    // i = first_column / 4 of class warp % 4, s_(warp % 4) floats right.
    const int warp = tid / 32;
    constexpr int kClassRows = kBk / Layout::kClasses;  // NN: a class's k rows in the tile
    const int b_first =
        kBKMajor ? (kBByClass ? (warp % 4 * (T::bn / 4) + first_column / 4) * BTile::kStride + op_b.shift(warp % 4)
                               : first_column * BTile::kStride) +
                       t
        : kBByClass ? t * kClassRows * BTile::kStride + op_b.shift(t) + first_column
                     : t * BTile::kStride + first_column;
    // NN by class: k row t + 4 is class t + 4's, from b_first.
    const int b_class_hi =
        kBByClass && !kBKMajor
            ? 4 * kClassRows * BTile::kStride + op_b.shift((t + 4) % Layout::kClasses) - op_b.shift(t)
            : 0;
    // 3xtf32 waits for each group before the next (the promotion reads its accumulator), so it needs one operand
    // buffer, not two: the next tile's fp32 bits are loaded while the group runs and split once it is complete, which
    // holds 16 registers instead of a second split buffer's 32 (with those, m64n128 spilled at the 232 cap).
    RegisterOperand<kSplit3x> frags[kSplit3x ? 1 : 2];
    std::uint32_t loaded[kSplit3x ? kSteps : 1][4];
    const auto fetch = [&](int g, auto buffer) {
      pipeline::mbarrier_wait(full(g % kStages), (g / kStages) & 1);
      if constexpr (kSplit3x) pipeline::mbarrier_wait(ready(g % kStages), (g / kStages) & 1);
      const float* const tile_b = smem + (g % kStages) * Layout::kStageFloats + ATile::kFloats + b_first;
      // Offsets from b_first that are compile-time constants in each layout: computed from a run-time stride they
      // cost registers, which spilled the accumulators. row_step: 4 rows of k further; col_step: to the second column.
      // NN: k rows 8s + t and 8s + t + 4 are row_step(s) and hi + row_step(s) (hi: 4 rows on, or the next classes).
      const auto load = [&](auto row_step, auto col_step, int hi) {
#pragma unroll
        for (int s = 0; s < kSteps; ++s) {
          const int offsets[4] = {kBKMajor ? 8 * s : s * row_step.value,
                                  kBKMajor ? 8 * s + col_step.value : s * row_step.value + col_step.value,
                                  kBKMajor ? 8 * s + 4 : hi + s * row_step.value,
                                  kBKMajor ? 8 * s + 4 + col_step.value : hi + s * row_step.value + col_step.value};
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            if constexpr (kSplit3x)
              loaded[s][q] = __float_as_uint(tile_b[offsets[q]]);
            else
              frags[buffer].set(s, q, __float_as_uint(tile_b[offsets[q]]));
          }
        }
      };
      // NT: the second column is 8 rows on in either tile (32 columns on, by class, is 8 rows of the class).
      if constexpr (kBKMajor)
        load(std::integral_constant<int, 0>{}, std::integral_constant<int, 8 * BTile::kStride>{}, 0);
      else if constexpr (kBByClass)
        load(std::integral_constant<int, BTile::kStride>{}, std::integral_constant<int, Columns::kSecond>{},
             b_class_hi);
      else
        load(std::integral_constant<int, 8 * BTile::kStride>{}, std::integral_constant<int, Columns::kSecond>{},
             4 * BTile::kStride);
    };
    const auto release = [&](int g) {
      __syncwarp();  // every lane's reads of the stage are done before it is released
      if constexpr (kCluster > 1) {
        if (lane < kCluster) pipeline::mbarrier_arrive_cluster(cluster::peer_address(empty(g % kStages), lane));
      } else {
        if (lane == 0) pipeline::mbarrier_arrive(empty(g % kStages));
      }
    };
    float acc[T::bm / 2], part[kSplit3x ? T::bm / 2 : 1];
#pragma unroll
    for (int i = 0; i < (kSplit3x ? T::bm / 2 : 1); ++i) part[i] = 0.f;
    // k tile kt of the current share (of `count`) is k tile first + kt of the block.
    const auto step = [&](int first, int kt, int count, auto buffer) {
      const int g = first + kt;
      const std::uint32_t stage_address = smem_base + static_cast<std::uint32_t>(g % kStages) * Layout::kStageBytes;
      const std::uint64_t desc = wgmma::sw128_kmajor_descriptor(stage_address);
      const auto other = std::integral_constant<int, 1 - decltype(buffer)::value>{};
      if constexpr (kSplit3x) {
#pragma unroll
        for (int s = 0; s < kSteps; ++s)
#pragma unroll
          for (int q = 0; q < 4; ++q) frags[0].set(s, q, loaded[s][q]);
        const std::uint32_t small_address = stage_address + Layout::kSmallAOffset * std::uint32_t{sizeof(float)};
        promote_k_tile<T::bm>(
            acc, part, frags[0], desc, wgmma::sw128_kmajor_descriptor(small_address),
            [&](int group) {
              if (group == 0 && kt + 1 < count) fetch(g + 1, other);
            },
            [&] { release(g); });
      } else {
        issue_k_steps<T::bm, false>(acc, frags[buffer], desc, desc);
        wgmma::wait_group<1>();  // group kt − 1 is complete: its stage and fragment buffer are free
        if (kt > 0) release(g - 1);
        if (kt + 1 < count) fetch(g + 1, other);
      }
    };

    const int warpgroup = tid / 128;
    float* const staging = smem + (Layout::kStagingOffset + warpgroup * 2 * kOutputChunkBytes) / sizeof(float);
    // The launcher makes a block persistent only with more tiles than blocks; Stream-K's blocks always are.
    const bool staged = kStreamK || (kMayPersist && tile_step < tiles);
    // A share of a tile, whose k tile kt is the block's k tile first + kt.
    const auto run_tile = [&](const TileShare& share, int first) {
      const BlockTile block = block_tile(share.tile);
      const int count = share.k_end - share.k_begin;
      // Loaded now, used after the k loop: the loads' latency hides behind it.
      float bias[2] = {0.f, 0.f};
#pragma unroll
      for (int j = 0; j < 2; ++j)
        if (staged && e.bias && block.col0 + frag_row + 8 * j < e.n)
          bias[j] = __ldg(e.bias + block.col0 + frag_row + 8 * j);
#pragma unroll
      for (int i = 0; i < T::bm / 2; ++i) acc[i] = 0.f;
      // The accumulators are fenced only around the k loop: inside it only the wgmmas (ordered volatile asm) touch
      // them, and a fence between two in-flight groups counts as a write, which makes ptxas serialize them (C7515).
      // A split block whose slice is empty has nothing to wait for: its partial is zero.
      if (kSplitK && count == 0) {
        wgmma::fence_operands(acc);
      } else {
        fetch(first, std::integral_constant<int, 0>{});
        wgmma::fence_operands(acc);
        for (int kt = 0; kt < count; kt += 2) {
          step(first, kt, count, std::integral_constant<int, 0>{});
          if (kt + 1 < count) step(first, kt + 1, count, std::integral_constant<int, 1>{});
        }
        wgmma::wait_group<0>();
        wgmma::fence_operands(acc);
        if constexpr (!kSplit3x) release(first + count - 1);  // 3xtf32 released every k tile in its step
      }
      if constexpr (kSplit3x) {
#pragma unroll
        for (int i = 0; i < T::bm / 2; ++i) acc[i] = split3x_unshrink(acc[i]);
      }
      if constexpr (kStreamK)
        if (!stream_k.whole(share) &&
            !gather_stream_k<T::threads>(acc, stream_k, share, split, tid, ConsumerBarrier<T::threads>{}))
          return;
      if (staged) {
        with_activation(e.act, [&](auto act) {
          StagedOutput<T::bm>::template store<decltype(act)::value>(acc, bias, e, map_y, map_z, block, staging,
                                                                     warpgroup, frag_row, t);
        });
      } else {
        // One tile per block: every copy has landed (the consumers waited for all of them), so once every
        // consumer's wgmmas are complete the pipeline's shared memory becomes the output tile.
        using Output = OutputTile<T::bm, T::bn, T::threads>;
        pipeline::sync_first_threads<T::threads>();
        // Split-k and the cluster's slices add tiles up as put() lays them out, so only a whole tile is shifted.
        const int shift_base = kSplitK || kClusterSlices > 1 ? -1 : Output::row_shift_base(e, block);
        put_accumulators<Output, T::bm, Columns>(smem, acc, t, Columns::first(tid / 32, lane / 4), shift_base, e,
                                                 block);
        pipeline::sync_first_threads<T::threads>();
        if constexpr (kClusterSlices > 1) {
          ClusterSplitK<T::bm, T::bn, T::threads, kClusterSlices>::finish(smem, e, block, tid,
                                                                          ConsumerBarrier<T::threads>{});
          return;
        }
        if constexpr (kSplitK)
          if (!gather_split_k<Output, T::bm, T::bn, T::threads, kGatherBatch>(smem, split, tid,
                                                                             ConsumerBarrier<T::threads>{}))
            return;
        if (shift_base >= 0)
          Output::finish_shifted(smem, e, block, tid, shift_base);
        else
          Output::finish(smem, e, block, tid);
      }
    };
    if constexpr (kMayPersist) {
      int first = 0;
      for_each_share([&](const TileShare& share) {
        run_tile(share, first);
        first += share.k_end - share.k_begin;
      });
      StagedOutput<T::bm>::drain();
    } else {
      run_tile(TileShare{first_tile, k_range.begin, k_range.end}, 0);
    }
  }
}

template <class Kernel>
void raise_smem_limit_once(std::once_flag& flag, Kernel kernel, std::size_t bytes) {
  std::call_once(flag, [kernel, bytes] {
    GT_CUDA_CALL(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  });
}

inline bool aligned16(const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; }

// How many blocks of a persistent kernel the current GPU runs at once: whole clusters only, which a GPC's SMs bound.
template <class Kernel>
unsigned resident_blocks(Kernel kernel, int threads, std::size_t smem_bytes, int cluster) {
  int device = 0, sms = 0, per_sm = 0;
  GT_CUDA_CALL(cudaGetDevice(&device));
  GT_CUDA_CALL(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (cluster == 1) {
    GT_CUDA_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes));
    return static_cast<unsigned>(std::max(1, sms * per_sm));
  }
  const KernelLaunch launch(dim3(static_cast<unsigned>(cluster)), dim3(static_cast<unsigned>(cluster)), threads,
                             smem_bytes, nullptr);
  int clusters = 0;
  GT_CUDA_CALL(cudaOccupancyMaxActiveClusters(&clusters, kernel, &launch.config));
  return static_cast<unsigned>(std::max(1, clusters) * cluster);
}

// A split TMA launch whose slice count one of kSlices is, where the tile's rows split evenly that many ways: as a
// cluster of the slices (kClusterSlices). False, launching nothing, otherwise, and always for a pair that shares A,
// which leaves its slices' partials to the tickets: a cluster of both (2 × slices blocks) would fit fewer clusters at
// once on a GPC's SMs.
template <class T, bool kBKMajor, bool kSplit3x, bool kBByClass, int... kSlices>
bool launch_cluster_split(int slices, const CUtensorMap& map_a, const TmaOperand& op_b, std::int64_t k,
                          const EpilogueParams& e, const SplitK& split, unsigned grid, bool behind,
                          cudaStream_t s) {
  using Layout = WgmmaLayout<T, kBKMajor, kSplit3x>;
  const auto launch = [&](auto slices_constant) {
    constexpr int kS = decltype(slices_constant)::value;
    if constexpr (T::cluster == 1 && cluster_split_fits<T::bm, T::bn, T::threads, kS>()) {
      if (slices != kS) return false;
      const auto kernel = wgmma_tf32_tma_kernel<T, kBKMajor, kSplit3x, true, kBByClass, kS>;
      static std::once_flag attribute_set;
      raise_smem_limit_once(attribute_set, kernel, Layout::kTmaSmemBytes);
      const KernelLaunch cluster_launch(dim3(grid, 1, kS), dim3(1, 1, kS), T::threads + 128, Layout::kTmaSmemBytes, s,
                                        behind);
      // The Y and Z maps are placeholders: a split block finishes through OutputTile.
      GT_CUDA_CALL(cudaLaunchKernelEx(&cluster_launch.config, kernel, map_a, op_b, map_a, map_a, k, e, split));
      return true;
    } else {
      return false;
    }
  };
  return (launch(std::integral_constant<int, kSlices>{}) || ...);
}

// The copy engine needs 16-byte aligned bases and row strides (vec4, or a staged variant's copies); B it also reads by
// class of rows (kernels/row_classes.hpp), given 4 stored rows. Other problems (A unaligned, unstaged) take the
// cp.async pipeline of the same tile. slices > 1 only where the tile has a split kernel (kSplitK). kStreamK: the
// Stream-K kernel of the tile, where the copy engine reads A and B (B not by class) and stores Y; elsewhere the tile's
// own kernel, as its variant without Stream-K would run (an operand base off 16 bytes is known only here).
template <class T, bool kBKMajor, bool kSplit3x, bool kSplitK, bool kStreamK = false>
void launch_wgmma_layout(const GemmProblem& p, const GemmOperands& x, int slices, const LaunchScratch& scratch,
                         cudaStream_t s) {
  using Layout = WgmmaLayout<T, kBKMajor, kSplit3x>;
  OperandView a = operand_a(p, x), b = operand_b(p, x);
  // Launched behind a staged variant's copies (none without staging scratch), or behind whatever precedes the call.
  const bool behind = stage_operands(a, b, scratch, s) || scratch.behind_previous_kernel;
  const SplitK split = make_split_k(slices, scratch);
  const bool b_by_class = b_read_by_class(b);
  if (a.vec4 && (b.vec4 || b_by_class)) {
    // B's box is as wide as the padded tile row (BTile::kStride, by class too), so the copy lays out the padding
    // itself. Each block of a cluster copies its slice of the A tile (for all of them).
    const CUtensorMap map_a =
        tensor_map_2d(a.ptr, a.rows, a.k, a.ld, T::bm / T::cluster, kBk, CU_TENSOR_MAP_SWIZZLE_128B);
    constexpr int kBoxWidth = Layout::BTile::kStride;
    const TmaOperand op_b =
        kBKMajor ? (b_by_class ? rows_by_class(b.ptr, b.rows, b.k, b.ld, Layout::kClasses, T::bn / Layout::kClasses,
                                               kBoxWidth)
                               : whole_rows(b.ptr, b.rows, b.k, b.ld, T::bn, kBoxWidth, CU_TENSOR_MAP_SWIZZLE_NONE))
        : b_by_class ? rows_by_class(b.ptr, b.k, b.rows, b.ld, Layout::kClasses, kBk / Layout::kClasses, kBoxWidth)
                     : whole_rows(b.ptr, b.k, b.rows, b.ld, kBk, kBoxWidth, CU_TENSOR_MAP_SWIZZLE_NONE);
    const auto launch_tma = [&](auto by_class) {
      constexpr bool kBByClass = decltype(by_class)::value;
      const auto kernel = wgmma_tf32_tma_kernel<T, kBKMajor, kSplit3x, kSplitK, kBByClass>;
      static std::once_flag attribute_set;
      raise_smem_limit_once(attribute_set, kernel, Layout::kTmaSmemBytes);
      // Persistent (fewer blocks than tiles) only with more than one wave of tiles and a row-major output the copy
      // engine can store, and never split (a split block's epilogue waits for the tile's other slices) nor with B by
      // class (its fragments' columns are not the staged epilogue's); the Y and Z maps are placeholders, never read,
      // otherwise.
      static const unsigned resident = resident_blocks(kernel, T::threads + 128, Layout::kTmaSmemBytes, T::cluster);
      const unsigned grid = grouped_grid_size(T::bm, T::cluster * T::bn, p.m, p.n) * T::cluster;
      const EpilogueParams e = make_epilogue_params(p, x);
      const bool copy_engine_stores = !kBByClass && !e.transposed && e.dropout_p == 0.f && e.n % 4 == 0 &&
                                      aligned16(e.y) && (e.z == nullptr || aligned16(e.z));
      const bool persistent = !kSplitK && Layout::kMayPersist && grid > resident && copy_engine_stores;
      const bool stream_k = kStreamK && copy_engine_stores;
      CUtensorMap map_y = map_a, map_z = map_a;
      if (persistent || stream_k) {
        map_y = tensor_map_2d(e.y, p.m, p.n, p.n, kOutputChunkRows, kOutputBoxCols, CU_TENSOR_MAP_SWIZZLE_128B);
        if (e.z)
          map_z = tensor_map_2d(e.z, p.m, p.n, p.n, kOutputChunkRows, kOutputBoxCols, CU_TENSOR_MAP_SWIZZLE_128B);
      }
      if constexpr (kStreamK && !kBByClass) {
        if (stream_k) {
          const auto stream_k_kernel = wgmma_tf32_tma_kernel<T, kBKMajor, kSplit3x, false, false, 1, true>;
          static std::once_flag stream_k_attribute_set;
          raise_smem_limit_once(stream_k_attribute_set, stream_k_kernel, Layout::kTmaSmemBytes);
          static const unsigned stream_k_resident =
              resident_blocks(stream_k_kernel, T::threads + 128, Layout::kTmaSmemBytes, 1);
          const unsigned blocks = std::min<unsigned>(stream_k_resident, kStreamKMaxBlocks);
          const std::int64_t tiles = grouped_grid_size(T::bm, T::bn, p.m, p.n);
          SplitK scratch = split;
          scratch.streamed_blocks = StreamKSchedule::streamed_blocks_for(
              tiles, static_cast<int>((p.k + kBk - 1) / kBk), static_cast<int>(blocks));
          // Where streaming would not finish sooner, the tile's own kernel as its variant without Stream-K runs it:
          // one tile a block for one wave, whose epilogue (OutputTile) was 10% faster at 1515×2288×6340.
          if (scratch.streamed_blocks > tiles % blocks) {
            const KernelLaunch launch(dim3(blocks), dim3(1), T::threads + 128, Layout::kTmaSmemBytes, s, behind);
            GT_CUDA_CALL(
                cudaLaunchKernelEx(&launch.config, stream_k_kernel, map_a, op_b, map_y, map_z, p.k, e, scratch));
            return;
          }
        }
      }
      if constexpr (kSplitK) {
        if (launch_cluster_split<T, kBKMajor, kSplit3x, kBByClass, 2, 3, 4>(slices, map_a, op_b, p.k, e, split, grid,
                                                                            behind, s))
          return;
      }
      const dim3 blocks(persistent ? resident : grid, 1, static_cast<unsigned>(slices));
      if (T::cluster > 1 || behind) {
        const KernelLaunch launch(blocks, dim3(T::cluster), T::threads + 128, Layout::kTmaSmemBytes, s, behind);
        GT_CUDA_CALL(cudaLaunchKernelEx(&launch.config, kernel, map_a, op_b, map_y, map_z, p.k, e, split));
      } else {
        kernel<<<blocks, T::threads + 128, Layout::kTmaSmemBytes, s>>>(map_a, op_b, map_y, map_z, p.k, e, split);
      }
    };
    if (b_by_class)
      launch_tma(std::true_type{});
    else
      launch_tma(std::false_type{});
  } else {
    // The copy engine cannot address these operands, so there is nothing to multicast: the cluster-less kernel (the
    // layout does not depend on the cluster).
    const auto kernel = wgmma_tf32_kernel<typename T::Unclustered, kBKMajor, kSplit3x, kSplitK>;
    static std::once_flag attribute_set;
    raise_smem_limit_once(attribute_set, kernel, Layout::kSmemBytes);
    const dim3 blocks(grouped_grid_size(T::bm, T::bn, p.m, p.n), 1, static_cast<unsigned>(slices));
    kernel<<<blocks, T::threads, Layout::kSmemBytes, s>>>(a, b, make_epilogue_params(p, x), split);
  }
  GT_CUDA_CHECK_LAUNCH();
}

// Split-k pays where a problem has too few output tiles for the SMs and a long k: skinny m against large n and k (a
// batch of 100–400 tokens through an LLM projection: 176×4096×4096 is 64 tiles of 128×128). Only the unclustered
// tiles a family lists in its SplitTiles get split kernels; each costs two more instantiations per layout. Stream-K
// likewise, for the tiles in its StreamKTiles: one more per layout.
template <class T, class Tiles>
struct InTileList;
template <class T, class... Listed>
struct InTileList<T, TileList<Listed...>> : std::bool_constant<(std::is_same_v<T, Listed> || ...)> {};

// B (as op(B)ᵀ) is K-major when transposed; A is K-major, as wgmma_problem_limits requires (for TN and TT, once a
// staged variant has copied it).
template <class T, bool kSplit3x, bool kSplitCapable, bool kStreamK = false>
void launch_wgmma(const GemmProblem& p, const GemmOperands& x, int slices, const LaunchScratch& scratch,
                  cudaStream_t s) {
  const auto launch = [&](auto b_k_major) {
    constexpr bool kBKMajor = decltype(b_k_major)::value;
    if constexpr (kSplitCapable)
      if (slices > 1) return launch_wgmma_layout<T, kBKMajor, kSplit3x, true>(p, x, slices, scratch, s);
    launch_wgmma_layout<T, kBKMajor, kSplit3x, false, kStreamK>(p, x, 1, scratch, s);
  };
  if (p.trans_b)
    launch(std::true_type{});
  else
    launch(std::false_type{});
}

// The launcher of T's Stream-K variant, or none where T has no Stream-K kernel.
template <class T, bool kSplit3x, class StreamKTiles>
constexpr LaunchFn stream_k_launcher() {
  if constexpr (InTileList<T, StreamKTiles>::value)
    return &launch_wgmma<T, kSplit3x, false, true>;
  else
    return nullptr;
}

template <bool kSplit3x, class SplitTiles, class StreamKTiles, class... Tiles>
std::vector<CompiledVariant> compile_wgmma_variants(TileList<Tiles...>, SplitTiles, StreamKTiles) {
  return {CompiledVariant{Tiles::config(), &launch_wgmma<Tiles, kSplit3x, InTileList<Tiles, SplitTiles>::value>,
                          InTileList<Tiles, SplitTiles>::value, nullptr,
                          stream_k_launcher<Tiles, kSplit3x, StreamKTiles>()}...};
}

}  // namespace gemmtune::kernels
