// Tensor-core family: mma.sync.m16n8k8 tf32 with fp32 accumulators, fed by a cp.async multi-stage pipeline.
//
// kSplit3x = false is plain tf32 (inputs rounded to nearest tf32: ~5e-4 relative error). kSplit3x = true is 3xtf32:
// each input x = big + small with big = tf32(x), small = tf32(x − big), both rounded to nearest, and
// acc += small·big + big·small + big·big (small·small is below fp32's rounding): fp32-level accuracy at a third of
// tf32's rate, still above FFMA's.
// 3xtf32 never lets mma add into the long-lived accumulator. The tensor core's accumulation does not round to nearest:
// modelled as an exact sum rounded toward zero once per mma (Fasi et al., PeerJ CS 2021; tests/kernels/
// tensor_core_model_test.cpp), each mma into a large running sum drops half an ulp of it, always toward zero, and
// three mma per k8 step made the error grow linearly with k (2.7e-5 at k = 4096 on the H100, 70× cuBLASLt fp32's).
// So the products of a few k8 steps go into a fresh accumulator and that is added into acc with FADD, which rounds to
// nearest: the promotion FP8 GEMMs on Hopper use. The truncations a fresh accumulator still takes scale every output
// down by a fraction that depends on how many steps share it (kernels/split3x_promotion.cuh): two steps, and the
// outputs are scaled back up once at the end.
//
// Shared layout follows the global layout, because cp.async cannot transpose:
// - a K-major operand is [rows][bk + 4] (row stride ≡ 4 banks mod 32, so the 8 row addresses of an ldmatrix phase hit
//   distinct bank quads) and is read with ldmatrix.x4, whose 32-bit view is exactly the tf32 fragment layout;
// - an MN-major operand is [bk][rows] with 16-byte chunks XOR-swizzled by k, read with 16-byte loads. ldmatrix cannot
//   transpose 32-bit data, so instead the fragment rows (or columns) are permuted: a thread's rows over all m16 tiles
//   of its warp (or columns over all n8 tiles) are made adjacent in memory, and the accumulators are unpermuted when
//   they are written out. Summation order over k is unchanged, so the results are those of the plain layout.
// The layout is therefore a template parameter: 4 instantiations per tile, chosen at launch.
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
#include "kernels/split3x_promotion.cuh"
#include "kernels/split_k.cuh"
#include "kernels/tile_loader.cuh"
#include "kernels/tile_schedule.cuh"

namespace gemmtune::kernels {

// One operand's shared tile. kThreadFloats: how many adjacent floats of an MN-major k-row one thread reads per
// fragment load (2 per m16 tile for A, 1 per n8 tile for B): 4 or 8.
template <int kRows, int kBk, bool kKMajor, int kThreadFloats>
struct MmaSmemOperand {
  static constexpr int kStride = kKMajor ? kBk + 4 : kRows;
  static constexpr int kFloats = kKMajor ? kRows * kStride : kBk * kStride;
  static_assert(kKMajor || (kRows % 32 == 0 && (kThreadFloats == 4 || kThreadFloats == 8)),
                "MN-major tiles swizzle 16-byte chunks inside aligned groups of 8");

  // The 8 lanes of a 16-byte-load phase are groupIDs {2p, 2p+1} × k rows t = 0..3 and read chunk
  // groupID·kThreadFloats/4 + h of their row; XOR-ing the chunk with a function of t that fills the chunk bits groupID
  // leaves free puts those 8 reads in 8 different bank quads.
  __device__ static int chunk_swizzle(int kk) {
    const int t = kk % 4;
    return kThreadFloats == 8 ? (t & 1) | ((t & 2) << 1) : t << 1;
  }

  __device__ static int offset(int r, int kk) {
    if constexpr (kKMajor)
      return r * kStride + kk;
    else
      return kk * kStride + ((r / 4) ^ chunk_swizzle(kk)) * 4 + r % 4;
  }
};

// Operand fragments for one k8 step, already in tf32 (and split into big + small for 3xtf32).
template <int kTiles, int kRegs, bool kSplit3x>
struct Fragments {
  std::uint32_t big[kTiles][kRegs];
  std::uint32_t small[kSplit3x ? kTiles : 1][kRegs];

  __device__ void convert(int tile, int reg, float x) {
    if constexpr (kSplit3x) {
      // small = x − big is exact in fp32 and is left as it is: the tensor core reads its top 19 bits (truncating it
      // where rounding would cost an add per element) and the error grid did not move (1.04× cuBLASLt fp32 either way).
      big[tile][reg] = ptx::to_tf32_exact(x);
      small[tile][reg] = __float_as_uint(x - __uint_as_float(big[tile][reg]));
    } else {
      big[tile][reg] = ptx::to_tf32(x);
    }
  }
};

// One warp's share of a block tile: loads its fragments from a pipeline stage and accumulates their products.
template <class T, bool kSplit3x, bool kAKMajor, bool kBKMajor>
struct MmaWarp {
  static constexpr int kPromoteSteps = kSplit3xPromoteSteps;
  static_assert(T::bk % (8 * kPromoteSteps) == 0, "a promotion interval is whole k8 steps of one stage");
  static constexpr int kTilesM = T::wm / 16, kTilesN = T::wn / 8;
  static constexpr int kRowsPerThread = 2 * kTilesM;  // rows g and g + 8 of each m16 tile
  static constexpr int kColsPerThread = kTilesN;      // column g of each n8 tile
  using SmemA = MmaSmemOperand<T::bm, T::bk, kAKMajor, kRowsPerThread>;
  using SmemB = MmaSmemOperand<T::bn, T::bk, kBKMajor, kColsPerThread>;
  static_assert(T::wm % 16 == 0 && T::wn % 16 == 0 && T::bk % 8 == 0, "warp tiles are m16 × (pairs of n8), k8 steps");

  using FragmentsA = Fragments<kTilesM, 4, kSplit3x>;
  struct StepFragments {
    FragmentsA a;
    Fragments<kTilesN, 2, kSplit3x> b;
  };

  int lane, group, in_group, row0, col0;  // row0/col0: the warp tile's origin in the block tile
  float acc[kTilesM][kTilesN][4] = {};

  // Block-tile position of accumulator element (i, j, q): undoes the MN-major operands' permutation.
  __device__ int acc_row(int i, int q) const {
    const int half = q / 2;
    return kAKMajor ? row0 + i * 16 + group + half * 8 : row0 + group * kRowsPerThread + 2 * i + half;
  }
  __device__ int acc_col(int j, int q) const {
    const int c = 2 * in_group + q % 2;
    return kBKMajor ? col0 + j * 8 + c : col0 + c * kColsPerThread + j;
  }

  // kFloats adjacent floats of MN-major k-row kk, starting at (chunk-aligned) tile row r.
  template <class Smem, int kFloats>
  __device__ static void load_row(float (&v)[kFloats], const float* tile, int r, int kk) {
#pragma unroll
    for (int c = 0; c < kFloats / 4; ++c)
      *reinterpret_cast<float4*>(&v[4 * c]) = *reinterpret_cast<const float4*>(tile + Smem::offset(r + 4 * c, kk));
  }

  // A's fragments of m16 tile i at step k8. An MN-major A comes in one piece (a thread's rows of all tiles are
  // adjacent), so it loads with i == 0 and the other calls do nothing.
  __device__ void load_a(FragmentsA& a, const float* tile_a, int k8, int i) const {
    if constexpr (kAKMajor) {
      std::uint32_t raw[4];
      ptx::ldmatrix_x4(raw, tile_a + SmemA::offset(row0 + i * 16 + lane % 8 + (lane / 8) % 2 * 8, k8 + lane / 16 * 4));
#pragma unroll
      for (int q = 0; q < 4; ++q) a.convert(i, q, __uint_as_float(raw[q]));
    } else if (i == 0) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {  // k = t (a0, a1) and k = t + 4 (a2, a3)
        float v[kRowsPerThread];
        load_row<SmemA>(v, tile_a, row0 + group * kRowsPerThread, k8 + in_group + 4 * half);
#pragma unroll
        for (int t = 0; t < kTilesM; ++t) {
          a.convert(t, 2 * half, v[2 * t]);
          a.convert(t, 2 * half + 1, v[2 * t + 1]);
        }
      }
    }
  }

  // B's fragment values of step k8 as fp32, each handed to put(n8 tile j, register, value).
  template <class Put>
  __device__ void load_b_values(const float* tile_b, int k8, Put&& put) const {
    if constexpr (kBKMajor) {
#pragma unroll
      for (int j = 0; j < kTilesN; j += 2) {
        std::uint32_t raw[4];
        ptx::ldmatrix_x4(raw, tile_b + SmemB::offset(col0 + j * 8 + lane % 8 + lane / 16 * 8, k8 + (lane / 8) % 2 * 4));
        put(j, 0, __uint_as_float(raw[0]));
        put(j, 1, __uint_as_float(raw[1]));
        put(j + 1, 0, __uint_as_float(raw[2]));
        put(j + 1, 1, __uint_as_float(raw[3]));
      }
    } else {
#pragma unroll
      for (int half = 0; half < 2; ++half) {  // k = t (b0) and k = t + 4 (b1)
        float v[kColsPerThread];
        load_row<SmemB>(v, tile_b, col0 + group * kColsPerThread, k8 + in_group + 4 * half);
#pragma unroll
        for (int j = 0; j < kTilesN; ++j) put(j, half, v[j]);
      }
    }
  }

  __device__ void load_b(StepFragments& f, const float* tile_b, int k8) const {
    load_b_values(tile_b, k8, [&f](int j, int reg, float x) { f.b.convert(j, reg, x); });
  }

  __device__ void load(StepFragments& f, const float* tile_a, const float* tile_b, int k8) const {
#pragma unroll
    for (int i = 0; i < kTilesM; ++i) load_a(f.a, tile_a, k8, i);
    load_b(f, tile_b, k8);
  }

  __device__ void multiply_row(const StepFragments& f, int i) {
#pragma unroll
    for (int j = 0; j < kTilesN; ++j) ptx::mma_tf32(acc[i][j], f.a.big[i], f.b.big[j]);
  }

  // 3xtf32: acc[i][j] += the products of kPromoteSteps k8 steps, summed in a fresh accumulator (small ones first,
  // while it is small) and added into acc with FADD (the promotion, see the top).
  template <int kTilesA, int kTilesB>
  __device__ void multiply_promoted(const Fragments<kTilesA, 4, true> (&a)[kPromoteSteps], int ia,
                                    const Fragments<kTilesB, 2, true> (&b)[kPromoteSteps], int jb, int i, int j) {
    float part[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int p = 0; p < kPromoteSteps; ++p) {
      ptx::mma_tf32(part, a[p].small[ia], b[p].big[jb]);
      ptx::mma_tf32(part, a[p].big[ia], b[p].small[jb]);
    }
#pragma unroll
    for (int p = 0; p < kPromoteSteps; ++p) ptx::mma_tf32(part, a[p].big[ia], b[p].big[jb]);
#pragma unroll
    for (int q = 0; q < 4; ++q) acc[i][j][q] += part[q];
  }

  // All k8 steps of one stage. tf32 loads step s + 1's fragments while step s multiplies (the asm is volatile, so
  // program order is issue order): B's first, then A's tile i right after the last mma that needs step s's tile i, so
  // every load has a row or more of mma to hide behind and only one A tile per row is live twice. 3xtf32's doubled
  // fragments leave no registers for a second set; its steps are three times longer, so one exposed latency costs less.
  __device__ void multiply_stage(const float* tile_a, const float* tile_b) {
    constexpr int kSteps = T::bk / 8;
    if constexpr (!kSplit3x) {
      StepFragments f[2];
      load(f[0], tile_a, tile_b, 0);
#pragma unroll
      for (int s = 0; s < kSteps; ++s) {
        StepFragments& now = f[s % 2];
        StepFragments& next = f[(s + 1) % 2];
        if (s + 1 < kSteps) load_b(next, tile_b, (s + 1) * 8);
#pragma unroll
        for (int i = 0; i < kTilesM; ++i) {
          multiply_row(now, i);
          if (s + 1 < kSteps) load_a(next.a, tile_a, (s + 1) * 8, i);
        }
      }
    } else if constexpr (kAKMajor) {
      // A K-major loads one m16 tile at a time, so B (every n8 tile) is split once per step and A tile by tile.
#pragma unroll 1
      for (int s = 0; s < kSteps; s += kPromoteSteps) {
        Fragments<kTilesN, 2, true> b[kPromoteSteps];
#pragma unroll
        for (int p = 0; p < kPromoteSteps; ++p)
          load_b_values(tile_b, (s + p) * 8, [&b, p](int j, int reg, float x) { b[p].convert(j, reg, x); });
#pragma unroll
        for (int i = 0; i < kTilesM; ++i) {
          Fragments<kTilesM, 4, true> a[kPromoteSteps];
#pragma unroll
          for (int p = 0; p < kPromoteSteps; ++p) load_a(a[p], tile_a, (s + p) * 8, i);
#pragma unroll
          for (int j = 0; j < kTilesN; ++j) multiply_promoted(a, i, b, j, i, j);
        }
      }
    } else {
      // An MN-major A comes in one piece, so A is split whole and B one n8 tile at a time (12 registers fewer than
      // every tile's big and small at once; the conversions are the same, once per element and step).
#pragma unroll 1
      for (int s = 0; s < kSteps; s += kPromoteSteps) {
        FragmentsA a[kPromoteSteps];
        float b_values[kPromoteSteps][kTilesN][2];
#pragma unroll
        for (int p = 0; p < kPromoteSteps; ++p) {
          load_a(a[p], tile_a, (s + p) * 8, 0);
          load_b_values(tile_b, (s + p) * 8, [&b_values, p](int j, int reg, float x) { b_values[p][j][reg] = x; });
        }
#pragma unroll
        for (int j = 0; j < kTilesN; ++j) {
          Fragments<1, 2, true> b[kPromoteSteps];
#pragma unroll
          for (int p = 0; p < kPromoteSteps; ++p) {
            b[p].convert(0, 0, b_values[p][j][0]);
            b[p].convert(0, 1, b_values[p][j][1]);
          }
#pragma unroll
          for (int i = 0; i < kTilesM; ++i) multiply_promoted(a, i, b, 0, i, j);
        }
      }
    }
  }
};

// kSplitK: blockIdx.z is a slice of k (kernels/split_k.cuh). Without it the kernel is the plain one, instruction for
// instruction: the split's bookkeeping costs the large tiles' register allocation a spill here and there.
// __maxnreg__ rather than __launch_bounds__: told only the block size, ptxas caps some instantiations at 128 registers
// and spills, though at ≤ 256 threads per block the register file holds 255 per thread.
template <class T, bool kSplit3x, bool kAKMajor, bool kBKMajor, bool kSplitK>
__global__ void __maxnreg__(255) mma_gemm_kernel(OperandView a, OperandView b, EpilogueParams e,
                                                                 SplitK split) {
  using Warp = MmaWarp<T, kSplit3x, kAKMajor, kBKMajor>;
  using SmemA = typename Warp::SmemA;
  using SmemB = typename Warp::SmemB;
  constexpr int kStageFloats = SmemA::kFloats + SmemB::kFloats;
  static_assert(T::stages >= 2, "a pipeline needs two stages");
  static_assert(T::threads * 255 <= 65536, "__maxnreg__(255) must leave a block its registers");

  extern __shared__ float4 shared_mem[];
  float* const smem = reinterpret_cast<float*>(shared_mem);
  const int tid = threadIdx.x, warp_id = tid / 32;
  Warp warp;
  warp.lane = tid % 32;
  warp.group = warp.lane / 4;     // the mma fragment's groupID
  warp.in_group = warp.lane % 4;  // and threadID_in_group
  warp.row0 = warp_id / T::warps_n * T::wm;
  warp.col0 = warp_id % T::warps_n * T::wn;
  const BlockTile block = grouped_block_tile(T::bm, T::bn, e.m, e.n);
  const KTileRange k_range = slice_k_tiles<kSplitK>(static_cast<int>((a.k + T::bk - 1) / T::bk), split.slices);
  const int k_tiles = k_range.end - k_range.begin;

  const ChunkCursor<T::bm, T::bk, T::threads> cursor_a(a, kAKMajor, block.row0, tid);
  const ChunkCursor<T::bn, T::bk, T::threads> cursor_b(b, kBKMajor, block.col0, tid);
  auto load_stage = [&](int stage, int kt) {
    float* const tile = smem + stage * kStageFloats;
    const std::int64_t k0 = std::int64_t{k_range.begin + kt} * T::bk;
    load_tile_async<SmemA>(tile, cursor_a, a, k0);
    load_tile_async<SmemB>(tile + SmemA::kFloats, cursor_b, b, k0);
  };

#pragma unroll
  for (int s = 0; s < T::stages - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    ptx::cp_async_commit();  // empty groups keep the wait count uniform
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    ptx::cp_async_wait<T::stages - 2>();
    // Makes tile kt visible to every warp, and tells the loader that every warp is done with tile kt − 1's stage.
    __syncthreads();
    if (kt + T::stages - 1 < k_tiles) load_stage((kt + T::stages - 1) % T::stages, kt + T::stages - 1);
    ptx::cp_async_commit();
    const float* const tile_a = smem + (kt % T::stages) * kStageFloats;
    warp.multiply_stage(tile_a, tile_a + SmemA::kFloats);
  }

  using Output = OutputTile<T::bm, T::bn, T::threads>;
  ptx::cp_async_wait<0>();
  __syncthreads();  // every warp is done with the pipeline's shared memory before it holds the output tile
#pragma unroll
  for (int i = 0; i < Warp::kTilesM; ++i)
#pragma unroll
    for (int j = 0; j < Warp::kTilesN; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const float y = kSplit3x ? split3x_unshrink(warp.acc[i][j][q]) : warp.acc[i][j][q];
        Output::put(smem, warp.acc_row(i, q), warp.acc_col(j, q), y);
      }
  __syncthreads();
  if constexpr (kSplitK)
    if (!gather_split_k<Output, T::bm, T::bn, T::threads>(smem, split, tid)) return;
  Output::finish(smem, e, block, tid);
}

template <class T, bool kSplit3x, bool kAKMajor, bool kBKMajor, bool kSplitK>
void launch_mma_kernel(const GemmProblem& p, const GemmOperands& x, int slices, const LaunchScratch& scratch,
                       cudaStream_t s) {
  using Warp = MmaWarp<T, kSplit3x, kAKMajor, kBKMajor>;
  constexpr std::size_t kPipelineBytes =
      T::stages * (Warp::SmemA::kFloats + Warp::SmemB::kFloats) * sizeof(float);
  constexpr std::size_t kOutputBytes = OutputTile<T::bm, T::bn, T::threads>::kBytes;
  constexpr std::size_t kSmemBytes = kPipelineBytes > kOutputBytes ? kPipelineBytes : kOutputBytes;
  const auto kernel = mma_gemm_kernel<T, kSplit3x, kAKMajor, kBKMajor, kSplitK>;
  static std::once_flag attribute_set;
  std::call_once(attribute_set, [kernel] {
    GT_CUDA_CALL(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(kSmemBytes)));
  });
  const dim3 grid(grouped_grid_size(T::bm, T::bn, p.m, p.n), 1, static_cast<unsigned>(slices));
  kernel<<<grid, T::threads, kSmemBytes, s>>>(operand_a(p, x), operand_b(p, x), make_epilogue_params(p, x),
                                              make_split_k(slices, scratch));
  GT_CUDA_CHECK_LAUNCH();
}

// Up to 64×64: the mma tiles that 256–512 problems pick. Larger tiles' problems fill the GPU, and four more layout
// instantiations each would cost compile time for nothing.
constexpr int kMmaSplitMaxTile = 64 * 64;

template <class T, bool kSplit3x, bool kAKMajor, bool kBKMajor>
void launch_mma_layout(const GemmProblem& p, const GemmOperands& x, int slices, const LaunchScratch& scratch,
                       cudaStream_t s) {
  if constexpr (has_split_k<T, kMmaSplitMaxTile>()) {
    if (slices > 1) return launch_mma_kernel<T, kSplit3x, kAKMajor, kBKMajor, true>(p, x, slices, scratch, s);
  }
  launch_mma_kernel<T, kSplit3x, kAKMajor, kBKMajor, false>(p, x, 1, scratch, s);
}

template <class T, bool kSplit3x>
void launch_mma_gemm(const GemmProblem& p, const GemmOperands& x, int slices, const LaunchScratch& scratch,
                     cudaStream_t s) {
  // A is K-major unless transposed; B (as op(B)ᵀ) is K-major only when transposed.
  if (!p.trans_a && !p.trans_b)
    launch_mma_layout<T, kSplit3x, true, false>(p, x, slices, scratch, s);
  else if (!p.trans_a)
    launch_mma_layout<T, kSplit3x, true, true>(p, x, slices, scratch, s);
  else if (!p.trans_b)
    launch_mma_layout<T, kSplit3x, false, false>(p, x, slices, scratch, s);
  else
    launch_mma_layout<T, kSplit3x, false, true>(p, x, slices, scratch, s);
}

template <bool kSplit3x, class... Tiles>
std::vector<CompiledVariant> compile_mma_variants(TileList<Tiles...>) {
  return {CompiledVariant{Tiles::config(), &launch_mma_gemm<Tiles, kSplit3x>,
                          has_split_k<Tiles, kMmaSplitMaxTile>()}...};
}

}  // namespace gemmtune::kernels
