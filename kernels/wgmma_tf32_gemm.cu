// Hopper tf32 family (sm_90a only): wgmma.mma_async with fp32 accumulators, fed by a cp.async multi-stage pipeline.
//
// tf32 wgmma reads shared-memory operands K-major only, and NN's B is N-major. So the kernel computes the transposed
// product Yᵀ (n×m) = Bᵀ (n×k) · Aᵀ (k×m):
// - wgmma's B operand (shared memory, through a descriptor) is Aᵀ: an A tile (bm rows of m × 32 of k) is K-major as A
//   is stored, and cp.async writes it straight into the canonical 128-byte-swizzle layout;
// - wgmma's A operand (registers) is the B tile, so any shared layout works: B's tile is copied as stored (k rows of n
//   for NN, n rows of k for NT), with rows padded so the fragment loads are free of bank conflicts.
// D's rows are Y's columns: warpgroup w computes Y columns [64w, 64w + 64) of the block tile for all bm rows, one
// m64n{bm}k8 wgmma per k8 step. TN and TT would need Aᵀ N-major in shared memory, which tf32 wgmma cannot read.
//
// Pipeline: the 4 k8 steps of a k tile form one wgmma group. While it runs, the warps publish the next tile (already
// in shared memory), issue the copies of the tile stages − 1 ahead and load the next tile's fragments into plain
// registers; they become wgmma operands only after the group completes, because ptxas serializes every wgmma (a wait
// after each) when wgmma input registers are written while a group is in flight (C7513). The register operand is
// rounded to tf32; the shared-memory operand goes in as fp32 bits, which the tensor core truncates.
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/cuda_call.hpp"
#include "kernels/compiled_variant.hpp"
#include "kernels/epilogue.cuh"
#include "kernels/operand_view.cuh"
#include "kernels/output_tile.cuh"
#include "kernels/ptx.cuh"
#include "kernels/tile_loader.cuh"
#include "kernels/tile_schedule.cuh"
#include "kernels/wgmma.cuh"

namespace gemmtune::kernels {
namespace {

constexpr int kBk = 32;  // one 128-byte swizzle row of tf32 per A-tile row

// The A tile, bm rows × 32 floats in the 128B-swizzle K-major layout of wgmma::sw128_kmajor_descriptor.
template <int kRows>
struct SwizzledATile {
  static_assert(kRows % 8 == 0, "whole 8-row swizzle atoms");
  static constexpr int kFloats = kRows * kBk;
  __device__ static int offset(int r, int kk) { return r * kBk + ((kk / 4) ^ (r % 8)) * 4 + kk % 4; }
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

template <class T, bool kBKMajor>
struct WgmmaLayout {
  static_assert(T::bk == kBk && T::wm == T::bm && T::wn == 16, "a warp owns 16 columns of Y × all bm rows, k tile 32");
  static_assert(T::bn % 64 == 0 && (T::bm == 64 || T::bm == 128 || T::bm == 256), "m64 per warpgroup, n64/128/256");
  static_assert(T::stages >= 3, "a stage for the running wgmma group, one for the next tile, one or more loading");
  using ATile = SwizzledATile<T::bm>;
  using BTile = PaddedBTile<T::bn, kBKMajor>;
  // Each stage starts 1024-byte aligned, as the swizzle atoms of its A tile need.
  static constexpr int kStageFloats = (ATile::kFloats + BTile::kFloats + 255) / 256 * 256;
  static constexpr std::uint32_t kStageBytes = kStageFloats * sizeof(float);
  static constexpr std::size_t kPipelineBytes = std::size_t{T::stages} * kStageFloats * sizeof(float);
  static constexpr std::size_t kOutputBytes = OutputTile<T::bm, T::bn, T::threads>::kBytes;
  static constexpr std::size_t kAlignSlack = 1024;  // the dynamic shared base is only 16-byte aligned
  static constexpr std::size_t kSmemBytes =
      (kPipelineBytes > kOutputBytes ? kPipelineBytes : kOutputBytes) + kAlignSlack;
};

template <class T, bool kBKMajor>
__global__ void __launch_bounds__(T::threads) wgmma_tf32_kernel(OperandView a, OperandView b, EpilogueParams e) {
  using Layout = WgmmaLayout<T, kBKMajor>;
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
  const int k_tiles = static_cast<int>((a.k + kBk - 1) / kBk);

  const ChunkCursor<T::bm, kBk, T::threads> cursor_a(a, true, block.row0, tid);
  const ChunkCursor<T::bn, kBk, T::threads> cursor_b(b, kBKMajor, block.col0, tid);
  auto load_stage = [&](int kt) {
    float* const stage = smem + (kt % kStages) * Layout::kStageFloats;
    const std::int64_t k0 = std::int64_t{kt} * kBk;
    load_tile_async<ATile>(stage, cursor_a, a.ptr, a.vec4, k0);
    load_tile_async<BTile>(stage + ATile::kFloats, cursor_b, b.ptr, b.vec4, k0);
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
    const float* const tile_b = smem + (kt % kStages) * Layout::kStageFloats + ATile::kFloats;
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      loaded[s][0] = __float_as_uint(tile_b[BTile::offset(frag_row, 8 * s + t)]);
      loaded[s][1] = __float_as_uint(tile_b[BTile::offset(frag_row + 8, 8 * s + t)]);
      loaded[s][2] = __float_as_uint(tile_b[BTile::offset(frag_row, 8 * s + t + 4)]);
      loaded[s][3] = __float_as_uint(tile_b[BTile::offset(frag_row + 8, 8 * s + t + 4)]);
    }
  };
  // Makes tile kt visible to every warp and to the tensor cores' async proxy.
  auto publish_tile = [] {
    wgmma::fence_async_shared();
    __syncthreads();
  };

  ptx::cp_async_wait<kStages - 2>();
  publish_tile();
  load_fragments(0);

  float acc[T::bm / 2];
#pragma unroll
  for (int i = 0; i < T::bm / 2; ++i) acc[i] = 0.f;
  for (int kt = 0; kt < k_tiles; ++kt) {
    std::uint32_t frags[kSteps][4];
#pragma unroll
    for (int s = 0; s < kSteps; ++s)
#pragma unroll
      for (int q = 0; q < 4; ++q) frags[s][q] = wgmma::to_tf32_operand(loaded[s][q]);
    const std::uint32_t stage_address = smem_base + (kt % kStages) * Layout::kStageBytes;
    const std::uint64_t desc = wgmma::sw128_kmajor_descriptor(stage_address);
    wgmma::fence_operands(acc);
    wgmma::fence();
#pragma unroll
    for (int s = 0; s < kSteps; ++s)
      wgmma::WgmmaTf32<T::bm>::mma(acc, frags[s], desc + (8 * s * sizeof(float) >> 4));  // k8 step: +32 B
    wgmma::commit_group();
    wgmma::fence_operands(acc);

    // While the group runs: publish tile kt + 1, refill the stage tile kt − 1 used (every warpgroup finished that
    // group before the barrier), and load the next fragments.
    if (kt + 1 < k_tiles) {
      ptx::cp_async_wait<kStages - 3>();
      publish_tile();
      if (kt + kStages - 1 < k_tiles) load_stage(kt + kStages - 1);
      ptx::cp_async_commit();
      load_fragments(kt + 1);
    }
    wgmma::wait_group<0>();
  }
  wgmma::fence_operands(acc);

  using Output = OutputTile<T::bm, T::bn, T::threads>;
  ptx::cp_async_wait<0>();
  __syncthreads();  // every warp is done with the pipeline's shared memory before it holds the output tile
#pragma unroll
  for (int i = 0; i < T::bm / 8; ++i)
#pragma unroll
    for (int q = 0; q < 4; ++q)  // D (row, col) = Y (col, row)
      Output::put(smem, 8 * i + 2 * t + q % 2, frag_row + 8 * (q / 2), acc[4 * i + q]);
  __syncthreads();
  Output::finish(smem, e, block, tid);
}

template <class T, bool kBKMajor>
void launch_wgmma_layout(const GemmProblem& p, const GemmOperands& x, cudaStream_t s) {
  constexpr std::size_t kSmemBytes = WgmmaLayout<T, kBKMajor>::kSmemBytes;
  const auto kernel = wgmma_tf32_kernel<T, kBKMajor>;
  static std::once_flag attribute_set;
  std::call_once(attribute_set, [kernel] {
    GT_CUDA_CALL(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(kSmemBytes)));
  });
  kernel<<<grouped_grid_size(T::bm, T::bn, p.m, p.n), T::threads, kSmemBytes, s>>>(operand_a(p, x), operand_b(p, x),
                                                                                   make_epilogue_params(p, x));
  GT_CUDA_CHECK_LAUNCH();
}

// B (as op(B)ᵀ) is K-major when transposed; A is K-major, as wgmma_tf32_problem_limits requires.
template <class T>
void launch_wgmma_tf32(const GemmProblem& p, const GemmOperands& x, cudaStream_t s) {
  if (p.trans_b)
    launch_wgmma_layout<T, true>(p, x, s);
  else
    launch_wgmma_layout<T, false>(p, x, s);
}

template <class... Tiles>
std::vector<CompiledVariant> compile_wgmma_variants(TileList<Tiles...>) {
  return {CompiledVariant{Tiles::config(), &launch_wgmma_tf32<Tiles>}...};
}

// bm is the wgmma's n (64, 128 or 256), bn is 64 per warpgroup. wm = bm, wn = 16: each warp owns 16 columns of Y.
// 128×256 (4 warpgroups) is left out: capped at 128 registers for 512 threads, its NN instantiation spills.
//                          bm   bn   bk   wm  wn tm tn stages
using WgmmaTiles = TileList<Tile<256, 128, 32, 256, 16, 0, 0, 4>,  // 2 warpgroups of m64n256: the 2048-4096 shapes
                            Tile<256, 128, 32, 256, 16, 0, 0, 3>,
                            Tile<128, 128, 32, 128, 16, 0, 0, 4>,
                            Tile<128, 128, 32, 128, 16, 0, 0, 3>,  // 102 KB: 2 blocks per SM (NN fits 128 registers)
                            Tile<256, 64, 32, 256, 16, 0, 0, 4>,   // 1 warpgroup: more blocks for 1024-2048
                            Tile<128, 64, 32, 128, 16, 0, 0, 4>,
                            Tile<64, 128, 32, 64, 16, 0, 0, 4>,
                            Tile<64, 128, 32, 64, 16, 0, 0, 6>,
                            Tile<64, 64, 32, 64, 16, 0, 0, 4>>;    // 256-512: enough blocks to fill the SMs

std::string wgmma_tf32_problem_limits(const GemmProblem& p) {
  if (p.trans_a)
    return "tf32 wgmma reads Aᵀ from shared memory K-major only, so A must be stored m×k (layouts nn, nt), not " +
           p.layout();
  return "";
}

std::string wgmma_tf32_device_limits() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                                                                      device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    const cudaError_t error = cudaGetLastError();  // clears it: asking is not a failure of later CUDA calls
    return std::string("wgmma needs a compute capability 9.0 GPU and none is usable: ") + cudaGetErrorString(error);
  }
  if (major != 9 || minor != 0)
    return "wgmma is sm_90a code, which runs on compute capability 9.0 only; this GPU is " + std::to_string(major) +
           "." + std::to_string(minor);
  return "";
}

}  // namespace

std::vector<CompiledVariant> wgmma_tf32_variants() { return compile_wgmma_variants(WgmmaTiles{}); }

FamilyLimits wgmma_tf32_limits() { return {&wgmma_tf32_problem_limits, &wgmma_tf32_device_limits}; }

}  // namespace gemmtune::kernels
