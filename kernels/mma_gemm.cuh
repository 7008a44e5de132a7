// Tensor-core family: mma.sync.m16n8k8 tf32 with fp32 accumulators, fed by a cp.async multi-stage pipeline.
//
// kSplit3x = false is plain tf32 (inputs rounded to tf32: ~1e-4 relative error). kSplit3x = true is 3xtf32: each
// input x = big + small with big = tf32(x), small = tf32(x − big), and acc += small·big + big·small + big·big (small·small
// is below fp32's rounding), which carries fp32-level accuracy at a third of tf32's speed: still above FFMA's.
//
// Shared layout follows the global layout, because cp.async cannot transpose: a K-major operand is [rows][bk + 4]
// (row stride ≡ 4 banks mod 32, so the 8 row addresses of an ldmatrix phase hit distinct bank quads) and is read with
// ldmatrix.x4; an MN-major operand is [bk][rows + 8] (stride ≡ 8 mod 32, so a fragment's (k = t, r = g) reads hit banks
// 8t + g) and is read with 32-bit loads, since ldmatrix cannot transpose 32-bit data. The layout is therefore a
// template parameter: 4 instantiations per tile, chosen at launch.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "cuda/cuda_call.hpp"
#include "kernels/compiled_variant.hpp"
#include "kernels/epilogue.cuh"
#include "kernels/operand_view.cuh"
#include "kernels/output_tile.cuh"
#include "kernels/ptx.cuh"
#include "kernels/tile_schedule.cuh"

namespace gemmtune::kernels {

template <int kRows, int kBk, bool kKMajor>
struct MmaSmemOperand {
  static constexpr int kStride = kKMajor ? kBk + 4 : kRows + 8;
  static constexpr int kFloats = kKMajor ? kRows * kStride : kBk * kStride;
  __device__ static int offset(int r, int kk) { return kKMajor ? r * kStride + kk : kk * kStride + r; }

  // Issues this thread's cp.async copies of one tile: 16-byte chunks where the operand allows, else four 4-byte copies;
  // floats outside the matrix are zero-filled (src-size < copy size) and never read.
  template <int kThreads>
  __device__ static void load_async(float* tile, const ChunkCursor<kRows, kBk, kThreads>& cursor, const float* any_valid,
                                    bool vec4, std::int64_t k0) {
#pragma unroll
    for (int c = 0; c < ChunkCursor<kRows, kBk, kThreads>::kChunks; ++c) {
      const int valid = cursor.valid(c, k0);
      const float* const src = cursor.src(c, k0);
      float* const dst = tile + offset(cursor.tile_r(c), cursor.tile_kk(c));
      if (vec4) {
        ptx::cp_async_16(dst, valid > 0 ? src : any_valid, valid * 4);
      } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) ptx::cp_async_4(dst + i, i < valid ? src + i : any_valid, i < valid ? 4 : 0);
      }
    }
  }
};

// One warp's operand fragments for one k8 step, already in tf32 (and split into big + small for 3xtf32).
template <int kTiles, int kRegs, bool kSplit3x>
struct Fragments {
  std::uint32_t big[kTiles][kRegs];
  std::uint32_t small[kSplit3x ? kTiles : 1][kRegs];

  __device__ void convert(int tile, int reg, std::uint32_t raw) {
    const float x = __uint_as_float(raw);
    big[tile][reg] = ptx::to_tf32(x);
    if constexpr (kSplit3x) small[tile][reg] = ptx::to_tf32(x - __uint_as_float(big[tile][reg]));
  }
};

template <class T, bool kSplit3x, bool kAKMajor, bool kBKMajor>
__global__ void __launch_bounds__(T::threads) mma_gemm_kernel(OperandView a, OperandView b, EpilogueParams e) {
  using SmemA = MmaSmemOperand<T::bm, T::bk, kAKMajor>;
  using SmemB = MmaSmemOperand<T::bn, T::bk, kBKMajor>;
  constexpr int kStageFloats = SmemA::kFloats + SmemB::kFloats;
  constexpr int kTilesM = T::wm / 16, kTilesN = T::wn / 8;
  static_assert(T::wm % 16 == 0 && T::wn % 16 == 0 && T::bk % 8 == 0, "warp tiles are m16 × (pairs of n8), k8 steps");
  static_assert(T::stages >= 2, "a pipeline needs two stages");

  extern __shared__ float4 shared_mem[];
  float* const smem = reinterpret_cast<float*>(shared_mem);
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int group = lane / 4, in_group = lane % 4;  // the mma fragment's groupID and threadID_in_group
  const int warp_row = warp / T::warps_n * T::wm, warp_col = warp % T::warps_n * T::wn;
  const BlockTile block = grouped_block_tile(T::bm, T::bn, e.m, e.n);
  const int k_tiles = static_cast<int>((a.k + T::bk - 1) / T::bk);

  const ChunkCursor<T::bm, T::bk, T::threads> cursor_a(a, kAKMajor, block.row0, tid);
  const ChunkCursor<T::bn, T::bk, T::threads> cursor_b(b, kBKMajor, block.col0, tid);
  auto load_stage = [&](int stage, int kt) {
    float* const tile = smem + stage * kStageFloats;
    const std::int64_t k0 = std::int64_t{kt} * T::bk;
    SmemA::template load_async<T::threads>(tile, cursor_a, a.ptr, a.vec4, k0);
    SmemB::template load_async<T::threads>(tile + SmemA::kFloats, cursor_b, b.ptr, b.vec4, k0);
  };

#pragma unroll
  for (int s = 0; s < T::stages - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    ptx::cp_async_commit();  // empty groups keep the wait count uniform
  }

  float acc[kTilesM][kTilesN][4] = {};
  for (int kt = 0; kt < k_tiles; ++kt) {
    ptx::cp_async_wait<T::stages - 2>();
    // Makes tile kt visible to every warp, and tells the loader that every warp is done with tile kt − 1's stage.
    __syncthreads();
    if (kt + T::stages - 1 < k_tiles) load_stage((kt + T::stages - 1) % T::stages, kt + T::stages - 1);
    ptx::cp_async_commit();

    const float* const tile_a = smem + (kt % T::stages) * kStageFloats;
    const float* const tile_b = tile_a + SmemA::kFloats;
    // Fully unrolled, the compiler hoists later k8 steps' fragment loads; 3xtf32's doubled fragments then exceed the
    // register file, so it runs its (three times longer) k8 steps one at a time.
#pragma unroll(kSplit3x ? 1 : T::bk / 8)
    for (int k8 = 0; k8 < T::bk; k8 += 8) {
      // All of B's fragments for this k8 step, then A's one m16 tile at a time: A's fragments are live for one row of
      // mma calls only, which keeps 3xtf32's doubled fragments within the register file.
      Fragments<kTilesN, 2, kSplit3x> frag_b;
#pragma unroll
      for (int j = 0; j < kTilesN; j += 2) {
        const int c = warp_col + j * 8;
        if constexpr (kBKMajor) {
          std::uint32_t raw[4];
          ptx::ldmatrix_x4(raw, tile_b + SmemB::offset(c + lane % 8 + lane / 16 * 8, k8 + (lane / 8) % 2 * 4));
          frag_b.convert(j, 0, raw[0]);
          frag_b.convert(j, 1, raw[1]);
          frag_b.convert(j + 1, 0, raw[2]);
          frag_b.convert(j + 1, 1, raw[3]);
        } else {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            frag_b.convert(j + h, 0, __float_as_uint(tile_b[SmemB::offset(c + h * 8 + group, k8 + in_group)]));
            frag_b.convert(j + h, 1, __float_as_uint(tile_b[SmemB::offset(c + h * 8 + group, k8 + in_group + 4)]));
          }
        }
      }
#pragma unroll
      for (int i = 0; i < kTilesM; ++i) {
        Fragments<1, 4, kSplit3x> frag_a;
        const int r = warp_row + i * 16;
        if constexpr (kAKMajor) {
          std::uint32_t raw[4];
          ptx::ldmatrix_x4(raw, tile_a + SmemA::offset(r + lane % 8 + (lane / 8) % 2 * 8, k8 + lane / 16 * 4));
#pragma unroll
          for (int q = 0; q < 4; ++q) frag_a.convert(0, q, raw[q]);
        } else {
          frag_a.convert(0, 0, __float_as_uint(tile_a[SmemA::offset(r + group, k8 + in_group)]));
          frag_a.convert(0, 1, __float_as_uint(tile_a[SmemA::offset(r + group + 8, k8 + in_group)]));
          frag_a.convert(0, 2, __float_as_uint(tile_a[SmemA::offset(r + group, k8 + in_group + 4)]));
          frag_a.convert(0, 3, __float_as_uint(tile_a[SmemA::offset(r + group + 8, k8 + in_group + 4)]));
        }
#pragma unroll
        for (int j = 0; j < kTilesN; ++j) {
          if constexpr (kSplit3x) {
            ptx::mma_tf32(acc[i][j], frag_a.small[0], frag_b.big[j]);
            ptx::mma_tf32(acc[i][j], frag_a.big[0], frag_b.small[j]);
          }
          ptx::mma_tf32(acc[i][j], frag_a.big[0], frag_b.big[j]);
        }
      }
    }
  }

  using Output = OutputTile<T::bm, T::bn, T::threads>;
  ptx::cp_async_wait<0>();
  __syncthreads();  // every warp is done with the pipeline's shared memory before it holds the output tile
#pragma unroll
  for (int i = 0; i < kTilesM; ++i)
#pragma unroll
    for (int j = 0; j < kTilesN; ++j) {
      const int r = warp_row + i * 16 + group, c = warp_col + j * 8 + in_group * 2;
      Output::put(smem, r, c, acc[i][j][0]);
      Output::put(smem, r, c + 1, acc[i][j][1]);
      Output::put(smem, r + 8, c, acc[i][j][2]);
      Output::put(smem, r + 8, c + 1, acc[i][j][3]);
    }
  __syncthreads();
  Output::finish(smem, e, block, tid);
}

template <class T, bool kSplit3x, bool kAKMajor, bool kBKMajor>
void launch_mma_layout(const GemmProblem& p, const GemmOperands& x, cudaStream_t s) {
  constexpr std::size_t kPipelineBytes =
      T::stages * (MmaSmemOperand<T::bm, T::bk, kAKMajor>::kFloats + MmaSmemOperand<T::bn, T::bk, kBKMajor>::kFloats) *
      sizeof(float);
  constexpr std::size_t kOutputBytes = OutputTile<T::bm, T::bn, T::threads>::kBytes;
  constexpr std::size_t kSmemBytes = kPipelineBytes > kOutputBytes ? kPipelineBytes : kOutputBytes;
  const auto kernel = mma_gemm_kernel<T, kSplit3x, kAKMajor, kBKMajor>;
  static std::once_flag attribute_set;
  std::call_once(attribute_set, [kernel] {
    GT_CUDA_CALL(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(kSmemBytes)));
  });
  kernel<<<grouped_grid_size(T::bm, T::bn, p.m, p.n), T::threads, kSmemBytes, s>>>(operand_a(p, x), operand_b(p, x),
                                                                                   make_epilogue_params(p, x));
  GT_CUDA_CHECK_LAUNCH();
}

template <class T, bool kSplit3x>
void launch_mma_gemm(const GemmProblem& p, const GemmOperands& x, cudaStream_t s) {
  // A is K-major unless transposed; B (as op(B)ᵀ) is K-major only when transposed.
  if (!p.trans_a && !p.trans_b)
    launch_mma_layout<T, kSplit3x, true, false>(p, x, s);
  else if (!p.trans_a)
    launch_mma_layout<T, kSplit3x, true, true>(p, x, s);
  else if (!p.trans_b)
    launch_mma_layout<T, kSplit3x, false, false>(p, x, s);
  else
    launch_mma_layout<T, kSplit3x, false, true>(p, x, s);
}

//                bm   bn   bk  wm  wn  tm tn stages
using MmaTiles = TileList<Tile<128, 128, 32, 64, 64, 0, 0, 3>,  // 128 threads, two blocks per SM
                          Tile<128, 128, 32, 64, 64, 0, 0, 4>,
                          Tile<128, 128, 16, 64, 64, 0, 0, 4>,
                          Tile<128, 256, 32, 64, 64, 0, 0, 3>,  // 256 threads, for 2048-4096
                          Tile<256, 128, 32, 64, 64, 0, 0, 3>,
                          Tile<128, 64, 32, 64, 32, 0, 0, 3>,   // more blocks for 512-1024
                          Tile<64, 128, 32, 32, 64, 0, 0, 3>,
                          Tile<64, 64, 32, 32, 32, 0, 0, 4>,    // 256-512: enough blocks to fill the SMs
                          Tile<32, 64, 32, 32, 32, 0, 0, 3>>;

template <bool kSplit3x, class... Tiles>
std::vector<CompiledVariant> compile_mma_variants(TileList<Tiles...>) {
  return {CompiledVariant{Tiles::config(), &launch_mma_gemm<Tiles, kSplit3x>}...};
}

}  // namespace gemmtune::kernels
