// SIMT fp32 family: IEEE FFMA, siboehm SGEMM_CUDA style (block tile → warp tile → thread tile), register-staged
// shared-memory double buffering.
//
// Both operands live in shared memory as [k][rows] so a thread reads its thread-tile fragments with 16-byte loads
// whatever the global layout: a K-major operand is transposed while it is stored from registers, an MN-major one is
// copied as is. That keeps the layout a run-time branch in the tile loader only, so one instantiation per tile serves
// NN/NT/TN/TT. Any alignment works: 16-byte global loads where the operand allows them, scalar loads elsewhere.
#include <mutex>

#include "cuda/cuda_call.hpp"
#include "kernels/kernel_launch.hpp"
#include "kernels/cluster_split_k.cuh"
#include "kernels/compiled_variant.hpp"
#include "kernels/epilogue.cuh"
#include "kernels/operand_view.cuh"
#include "kernels/output_tile.cuh"
#include "kernels/split_k.cuh"
#include "kernels/tile_schedule.cuh"

namespace gemmtune::kernels {
namespace {

// Shared tiles are [bk][kRowFloats + 4]. Every fragment read is then the thread's base address plus a compile-time
// offset: an XOR swizzle cost ~40 address instructions per k tile, a chain each warp waited through before its first
// LDS (ncu: 0.19 cycles per issue stalled on fixed-latency waits). The padding spreads a K-major operand's transposed
// stores, which hit 32/bk·4 consecutive rows × bk/4 k-chunks per warp, over bank offsets 0 and 16: conflict-free at
// bk = 8, 2-way at bk = 16, 4-way at bk = 32, on a few stores per k tile. Reads and MN-major stores stay within one
// row per chunk group and are conflict-free.
template <int kRowFloats, int kBk>
struct PaddedTile {
  static_assert(kRowFloats % 32 == 0, "the bank argument above assumes whole 32-float rows");
  static constexpr int kStride = kRowFloats + 4;
  static constexpr int kFloats = kBk * kStride;
  __device__ static int offset(int kk, int r) { return kk * kStride + r; }
};

// One operand's next tile, held in registers between its global load and its shared-memory store, so the loads are in
// flight while the current tile is multiplied. kUnalignedRows: an operand's rows may not be 16-byte aligned (k = 755),
// so interior tiles take a path of 4-byte loads with no bounds, where the bounds walk ran 4-8% slower (H100,
// scripts/dev/simt_narrow_unaligned_profile.json). Only that instantiation has the path: in the aligned kernels it
// moved registers and scheduling enough to run some variants 2-20% slower at aligned shapes (1024³ split-k 2).
template <int kRows, int kBk, int kThreads, bool kUnalignedRows>
struct StagedTile {
  using Cursor = ChunkCursor<kRows, kBk, kThreads>;
  float4 regs[Cursor::kChunks];

  __device__ void load(const Cursor& cursor, bool vec4, std::int64_t k0) {
    if (vec4 && cursor.interior(k0)) {
#pragma unroll
      for (int c = 0; c < Cursor::kChunks; ++c) regs[c] = __ldg(reinterpret_cast<const float4*>(cursor.src(c, k0)));
      return;
    }
    if constexpr (kUnalignedRows) {
      if (cursor.interior(k0)) {
#pragma unroll
        for (int c = 0; c < Cursor::kChunks; ++c) {
          const float* const src = cursor.src(c, k0);
          regs[c] = make_float4(__ldg(src), __ldg(src + 1), __ldg(src + 2), __ldg(src + 3));
        }
        return;
      }
    }
#pragma unroll
    for (int c = 0; c < Cursor::kChunks; ++c) {
      const int valid = cursor.valid(c, k0);
      const float* const src = cursor.src(c, k0);
      if (valid == 4 && vec4) {
        regs[c] = __ldg(reinterpret_cast<const float4*>(src));
      } else {
        regs[c].x = valid > 0 ? __ldg(src) : 0.f;
        regs[c].y = valid > 1 ? __ldg(src + 1) : 0.f;
        regs[c].z = valid > 2 ? __ldg(src + 2) : 0.f;
        regs[c].w = valid > 3 ? __ldg(src + 3) : 0.f;
      }
    }
  }

  __device__ void store(float* tile, const Cursor& cursor) const {
    using Rows = PaddedTile<kRows, kBk>;
#pragma unroll
    for (int c = 0; c < Cursor::kChunks; ++c) {
      const int r = cursor.tile_r(c), kk = cursor.tile_kk(c);
      if (cursor.k_major) {
        tile[Rows::offset(kk, r)] = regs[c].x;
        tile[Rows::offset(kk + 1, r)] = regs[c].y;
        tile[Rows::offset(kk + 2, r)] = regs[c].z;
        tile[Rows::offset(kk + 3, r)] = regs[c].w;
      } else {
        *reinterpret_cast<float4*>(tile + Rows::offset(kk, r)) = regs[c];
      }
    }
  }
};

// Rows the last row tile shares with the tile above once moved up to end at the operand's last row, where it would
// run past it: its loads then take the interior path, as every other block's do. The bounds walk it took instead, on
// every k tile while the rest of the wave waited, ran 128x64 tiles 31.4 us at m = 237 against 27.7 at 256 (fp32
// ×2048×768 bias+gelu, H100; moved up: 27.7), and predicating those rows inside the loader slowed every block
// (results/nvidia-h100-80gb-hbm3/simt_last_tile_overlap_ab.txt). 0 where the matrix is shorter than a tile, or where
// the move would break an MN-major operand's 16-byte loads.
template <int kRows>
__device__ int last_tile_overlap(const OperandView& op, std::int64_t row0) {
  const std::int64_t over = row0 + kRows - op.rows;
  if (over <= 0 || op.rows < kRows || (!op.k_major && op.vec4 && over % 4 != 0)) return 0;
  return static_cast<int>(over);
}

// An 8×8 thread tile needs ~150 registers with its staging and addresses: capping at 128 (16 warps per SM) spills, so
// 256-thread blocks run one per SM (8 warps, each with 64 independent FFMAs per k) and 128-thread blocks two.
template <int kThreads>
constexpr int simt_min_blocks() {
  return kThreads >= 256 ? 1 : 256 / kThreads;
}

// kSplitK: blockIdx.z is a slice of k (kernels/split_k.cuh); without it the kernel is the plain one. A clustered tile
// (T::cluster > 1) splits k over the blocks of a cluster instead (kernels/cluster_split_k.cuh). kUnalignedRows: see
// StagedTile.
template <class T, bool kSplitK, bool kUnalignedRows>
__global__ void __launch_bounds__(T::threads, simt_min_blocks<T::threads>())
    simt_gemm_kernel(OperandView a, OperandView b, EpilogueParams e, SplitK split) {
  constexpr int kThreadsN = T::wn / T::tn;  // lanes of a warp along n
  constexpr int kThreadsM = T::wm / T::tm;
  static_assert(kThreadsM * kThreadsN == 32, "a warp's thread tiles must cover its warp tile");
  static_assert(T::tm % 4 == 0 && T::tn % 4 == 0, "thread tiles are read in 4-float chunks");
  using TileA = PaddedTile<T::bm, T::bk>;
  using TileB = PaddedTile<T::bn, T::bk>;
  constexpr int kTileFloats = TileA::kFloats + TileB::kFloats;

  extern __shared__ float4 shared_mem[];
  float* const smem = reinterpret_cast<float*>(shared_mem);
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_row = warp / T::warps_n * T::wm, warp_col = warp % T::warps_n * T::wn;
  const int lane_m = lane / kThreadsN, lane_n = lane % kThreadsN;
  const BlockTile block = grouped_block_tile(T::bm, T::bn, e.m, e.n);
  // The tile's rows in shared memory start skip_rows above the block's own: those are the tile above's, not stored.
  const int skip_rows = last_tile_overlap<T::bm>(a, block.row0);

  const ChunkCursor<T::bm, T::bk, T::threads> cursor_a(a, a.k_major, block.row0 - skip_rows, tid);
  const ChunkCursor<T::bn, T::bk, T::threads> cursor_b(b, b.k_major, block.col0, tid);
  StagedTile<T::bm, T::bk, T::threads, kUnalignedRows> next_a;
  StagedTile<T::bn, T::bk, T::threads, kUnalignedRows> next_b;
  constexpr bool kSliced = kSplitK || T::cluster > 1;
  const KTileRange k_range =
      slice_k_tiles<kSliced>(static_cast<int>((a.k + T::bk - 1) / T::bk), T::cluster > 1 ? T::cluster : split.slices);
  const std::int64_t k_first = std::int64_t{k_range.begin} * T::bk;
  next_a.load(cursor_a, a.vec4, k_first);
  next_b.load(cursor_b, b.vec4, k_first);
  next_a.store(smem, cursor_a);
  next_b.store(smem + TileA::kFloats, cursor_b);
  __syncthreads();

  // A thread's fragments of step kk: rows of A and columns of B, tm and tn floats read as 16-byte chunks.
  const auto load_fragments = [&](const float* tile, int kk, float (&frag_a)[T::tm], float (&frag_b)[T::tn]) {
#pragma unroll
    for (int i = 0; i < T::tm / 4; ++i)
      *reinterpret_cast<float4*>(&frag_a[i * 4]) =
          *reinterpret_cast<const float4*>(tile + TileA::offset(kk, warp_row + (i * kThreadsM + lane_m) * 4));
#pragma unroll
    for (int j = 0; j < T::tn / 4; ++j)
      *reinterpret_cast<float4*>(&frag_b[j * 4]) = *reinterpret_cast<const float4*>(
          tile + TileA::kFloats + TileB::offset(kk, warp_col + (j * kThreadsN + lane_n) * 4));
  };
  float acc[T::tm][T::tn] = {};
  const auto multiply = [&](const float (&frag_a)[T::tm], const float (&frag_b)[T::tn]) {
#pragma unroll
    for (int i = 0; i < T::tm; ++i)
#pragma unroll
      for (int j = 0; j < T::tn; ++j) acc[i][j] = fmaf(frag_a[i], frag_b[j], acc[i][j]);
  };

  // Two fragment buffers: step kk + 1's reads are in flight while step kk multiplies. The last step of a tile
  // multiplies after the barrier that publishes the next tile, behind the reads of that tile's first step, so no warp
  // waits on shared-memory latency right after the barrier.
  static_assert(T::bk % 2 == 0, "the last step of a tile uses fragment buffer 1");
  float frags_a[2][T::tm], frags_b[2][T::tn];
  load_fragments(smem, 0, frags_a[0], frags_b[0]);
  const int k_tiles = k_range.end - k_range.begin;
  for (int kt = 0; kt < k_tiles; ++kt) {
    const bool has_next = kt + 1 < k_tiles;
    if (has_next) {
      next_a.load(cursor_a, a.vec4, k_first + std::int64_t{kt + 1} * T::bk);
      next_b.load(cursor_b, b.vec4, k_first + std::int64_t{kt + 1} * T::bk);
    }
    const float* const tile = smem + (kt % 2) * kTileFloats;
#pragma unroll
    for (int kk = 0; kk < T::bk - 1; ++kk) {
      load_fragments(tile, kk + 1, frags_a[(kk + 1) % 2], frags_b[(kk + 1) % 2]);
      multiply(frags_a[kk % 2], frags_b[kk % 2]);
    }
    if (has_next) {
      float* const other = smem + ((kt + 1) % 2) * kTileFloats;
      next_a.store(other, cursor_a);
      next_b.store(other + TileA::kFloats, cursor_b);
      // One barrier per tile is enough with two buffers: every warp read the other buffer (tile kt − 1) before it
      // arrived at the previous one.
      __syncthreads();
      load_fragments(other, 0, frags_a[0], frags_b[0]);
    }
    multiply(frags_a[1], frags_b[1]);
  }
  __syncthreads();  // every warp is done reading the pipeline before it becomes the output tile

  using Output = OutputTile<T::bm, T::bn, T::threads>;
#pragma unroll
  for (int i = 0; i < T::tm; ++i)
#pragma unroll
    for (int j = 0; j < T::tn; ++j)
      Output::put(smem, warp_row + (i / 4 * kThreadsM + lane_m) * 4 + i % 4,
                  warp_col + (j / 4 * kThreadsN + lane_n) * 4 + j % 4, acc[i][j]);
  if constexpr (T::cluster > 1) {
    ClusterSplitK<T::bm, T::bn, T::threads, T::cluster>::finish(smem, e, {block.row0 - skip_rows, block.col0}, tid,
                                                                 WholeBlockBarrier{}, skip_rows);
    return;
  }
  __syncthreads();
  if constexpr (kSplitK)
    if (!gather_split_k<Output, T::bm, T::bn, T::threads>(smem, split, tid)) return;
  Output::finish(smem + skip_rows * Output::kStride, e, block, tid);
}

template <class T, bool kSplitK>
void launch_simt_kernel(const GemmProblem& p, const GemmOperands& x, int slices, const LaunchScratch& scratch,
                        cudaStream_t s) {
  constexpr std::size_t kPipelineBytes =
      2 * std::size_t{PaddedTile<T::bm, T::bk>::kFloats + PaddedTile<T::bn, T::bk>::kFloats} * sizeof(float);
  constexpr std::size_t kOutputBytes = OutputTile<T::bm, T::bn, T::threads>::kBytes;
  constexpr std::size_t kSmemBytes = kPipelineBytes > kOutputBytes ? kPipelineBytes : kOutputBytes;
  static std::once_flag attribute_set;
  std::call_once(attribute_set, [] {
    for (auto* kernel : {simt_gemm_kernel<T, kSplitK, false>, simt_gemm_kernel<T, kSplitK, true>})
      GT_CUDA_CALL(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(kSmemBytes)));
  });
  const OperandView a = operand_a(p, x), b = operand_b(p, x);
  auto* const kernel = a.vec4 && b.vec4 ? simt_gemm_kernel<T, kSplitK, false> : simt_gemm_kernel<T, kSplitK, true>;
  if constexpr (T::cluster > 1) {
    const KernelLaunch launch(dim3(grouped_grid_size(T::bm, T::bn, p.m, p.n), 1, T::cluster), dim3(1, 1, T::cluster),
                               T::threads, kSmemBytes, s);
    GT_CUDA_CALL(
        cudaLaunchKernelEx(&launch.config, kernel, a, b, make_epilogue_params(p, x), make_split_k(1, scratch)));
  } else {
    const dim3 grid(grouped_grid_size(T::bm, T::bn, p.m, p.n), 1, static_cast<unsigned>(slices));
    kernel<<<grid, T::threads, kSmemBytes, s>>>(a, b, make_epilogue_params(p, x), make_split_k(slices, scratch));
  }
  GT_CUDA_CHECK_LAUNCH();
}

// Up to 128×128: at 1024³ the 128×128 tile is the fastest per block but has 64 blocks for 132 SMs; slicing k fills
// them. Few instantiations per tile here (aligned rows or not; the layout is a run-time branch), so the split-k ones
// cost little to compile.
// Clustered tiles split k inside their kernel and take no slices.
constexpr int kSimtSplitMaxTile = 128 * 128;
template <class T>
constexpr bool simt_has_split_k() {
  return T::cluster == 1 && has_split_k<T, kSimtSplitMaxTile>();
}

template <class T>
void launch_simt_gemm(const GemmProblem& p, const GemmOperands& x, int slices, const LaunchScratch& scratch,
                      cudaStream_t s) {
  if constexpr (simt_has_split_k<T>()) {
    if (slices > 1) return launch_simt_kernel<T, true>(p, x, slices, scratch, s);
  }
  launch_simt_kernel<T, false>(p, x, 1, scratch, s);
}

//                 bm   bn   bk  wm  wn  tm tn  stages
using SimtTiles = TileList<Tile<128, 128, 8, 32, 64, 8, 8, 2>,   // the classic 8×8-per-thread shape, 256 threads
                           Tile<128, 128, 16, 32, 64, 8, 8, 2>,  // same, half the barriers per k
                           Tile<128, 128, 8, 64, 32, 8, 8, 2>,   // taller warps: A reads broadcast less, B more
                           Tile<128, 64, 16, 32, 64, 8, 8, 2>,   // 128 threads, for 1024-2048
                           Tile<64, 128, 16, 32, 64, 8, 8, 2>,
                           Tile<64, 64, 16, 32, 32, 8, 4, 2>,    // more blocks for 256-512
                           Tile<64, 64, 32, 32, 32, 4, 8, 2>,
                           Tile<32, 64, 16, 32, 32, 4, 8, 2>,    // 64 threads: enough blocks to fill 132 SMs at 256
                           // 8×16 per thread, as cuBLASLt's fp32 kernel: 6 LDS.128 per 128 FFMA, for 2048-4096
                           Tile<128, 256, 16, 64, 64, 8, 16, 2>,
                           // k split over a cluster of two (sm_90): 1024-2048 with twice the blocks of the tile
                           Tile<128, 128, 16, 32, 64, 8, 8, 2, 2>,
                           Tile<128, 64, 16, 32, 64, 8, 8, 2, 2>,
                           Tile<64, 128, 16, 32, 64, 8, 8, 2, 2>>;

template <class... Tiles>
std::vector<CompiledVariant> compile_all(TileList<Tiles...>) {
  return {CompiledVariant{Tiles::config(), &launch_simt_gemm<Tiles>, simt_has_split_k<Tiles>()}...};
}

}  // namespace

std::vector<CompiledVariant> simt_fp32_variants() { return compile_all(SimtTiles{}); }

}  // namespace gemmtune::kernels
