// How the skinny families (skinny_gemm.cu, skinny_stream_gemm.cu) launch: k split into as many slices as fill the
// GPU, since a decode GEMM has few output tiles (2×824×11008 is 7 tiles of 128 columns) and each must stream B from
// DRAM, and one grid of bm×bn output tiles × slices.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>

#include <cuda_runtime_api.h>

#include "cuda/cuda_call.hpp"
#include "kernels/compiled_variant.hpp"
#include "kernels/epilogue.cuh"
#include "kernels/kernel_launch.hpp"
#include "kernels/operand_view.cuh"
#include "kernels/split_k.cuh"
#include "kernels/tile_schedule.cuh"
#include "problem/gemm_problem.hpp"

namespace gemmtune::kernels {

// The most slices a problem is split into: the last block of a tile adds every slice's bm×bn partial.
constexpr int kMaxSkinnySlices = 64;

// Asked at every launch (skinny_slices), so each device's answer is kept: a launch pays no CUDA attribute query.
inline int sm_count() {
  constexpr int kDevicesKept = 64;
  static std::atomic<int> kept[kDevicesKept] = {};
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();  // clears it: sizing scratch without a GPU is not a failure of later CUDA calls
    return 132;          // an H100's or H200's, so scratch sizes on a machine without a GPU are the ones it would use
  }
  if (device < kDevicesKept && (sms = kept[device].load(std::memory_order_relaxed)) > 0) return sms;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    cudaGetLastError();
    return 132;
  }
  if (device < kDevicesKept) kept[device].store(sms, std::memory_order_relaxed);
  return sms;
}

// The slice count whose critical path streams the fewest floats: each SM runs ceil(blocks / SMs) blocks of
// ceil(k_tiles / s) chunks of bk×bn floats of B, each of them then writing its bm×bn partial where k is split, and the
// tile's last block reads the s partials. Without the writes, a tile that already filled several waves was split for
// a few percent of its waves: the 3xtf32 16×256×16 tile split 16×250002×1024 four ways (3908 blocks of 16 chunks, 64
// MB of partials written and read again) and streamed 75.4% of 4.8 TB/s, unsplit 80.8% (H200, L2 cold). Memory
// bound, resident blocks per SM share its bandwidth, so the busiest SM's share is what a launch takes. Counting waves
// of the blocks an SM holds at once instead (3 for the 8×128 mma tile) split more, and measured mixed on the H200's
// decode shapes: 1.04-1.14x faster at some, 0.77-0.96x at others (4×8192×3001: 384 blocks of 16 chunks ran slower
// than 128 of 47). A tile built to stream from several blocks per SM (kResidentBlocks) counts them: a wave is that
// many blocks per SM.
template <class T, int kResidentBlocks = 1>
int skinny_slices(const GemmProblem& p) {
  const std::int64_t tiles = ((p.m + T::bm - 1) / T::bm) * ((p.n + T::bn - 1) / T::bn);
  const std::int64_t k_tiles = (p.k + T::bk - 1) / T::bk;
  const std::int64_t sms = std::int64_t{sm_count()} * kResidentBlocks;
  const int most = static_cast<int>(std::min<std::int64_t>(kMaxSkinnySlices, k_tiles));
  int best = 1;
  std::int64_t best_floats = 0;
  for (int s = 1; s <= most; ++s) {
    const std::int64_t waves = (tiles * s + sms - 1) / sms;
    const std::int64_t partial = s > 1 ? T::bm * T::bn : 0;
    const std::int64_t floats = waves * (((k_tiles + s - 1) / s) * T::bk * T::bn + partial) + s * partial;
    if (s == 1 || floats < best_floats) {
      best = s;
      best_floats = floats;
    }
  }
  return best;
}

#if defined(__CUDACC__)
// The skinny tiles' split-k sum (gather_split_k). These tiles split k up to kMaxSkinnySlices ways, and one slice at a
// time the tile's last block waits out an L2 round trip per slice while the tile's other blocks are done. Where a
// thread sums 4 elements (the 8×128 tiles) it loads 4 slices at once: on the H200 with a cold L2, over 16 decode
// shapes in tf32 and fp32, those tiles ran 1.05x as fast (geomean; 0.97-1.34x, the most where k was split most) and
// each problem's fastest skinny variant 1.05x (results/nvidia-h200/decode_split_gather.json.gz). Where a thread sums
// 8 (16×128, 8×256), 2 slices at once ran 0.93-0.96x as fast (geomean; not understood), and 4 spilled under the
// 80-register cap of three blocks per SM, so the tiles of 8 and 16 elements keep one slice at a time.
template <class Output, int kRows, int kCols, int kThreads>
__device__ __forceinline__ bool gather_skinny_split_k(float* tile, const SplitK& split, int tid) {
  constexpr int kPerThread = kRows * kCols / kThreads;
  return gather_split_k<Output, kRows, kCols, kThreads, kPerThread, WholeBlockBarrier, kPerThread <= 4 ? 4 : 1>(
      tile, split, tid);
}
#endif

// Lets kKernel take kSmemBytes of dynamic shared memory, and clusters of more than 8 blocks where kClusterBlocks is
// (an sm_90 extension the kernel must ask for; H100 and H200 allow 16): once per kernel.
template <auto kKernel, std::size_t kSmemBytes, int kClusterBlocks = 1>
void set_skinny_attributes_once() {
  static std::once_flag attribute_set;
  std::call_once(attribute_set, [] {
    GT_CUDA_CALL(
        cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSmemBytes)));
    if constexpr (kClusterBlocks > 8)
      GT_CUDA_CALL(cudaFuncSetAttribute(kKernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  });
}

// One launch of kKernel over tile T's grid, with kSmemBytes of dynamic shared memory.
template <auto kKernel, class T, int kThreads, std::size_t kSmemBytes>
void launch_skinny_tiles(const GemmProblem& p, const GemmOperands& x, int slices, const LaunchScratch& scratch,
                         cudaStream_t s) {
  set_skinny_attributes_once<kKernel, kSmemBytes>();
  const dim3 grid(grouped_grid_size(T::bm, T::bn, p.m, p.n), 1, static_cast<unsigned>(slices));
  kKernel<<<grid, kThreads, kSmemBytes, s>>>(operand_a(p, x), operand_b(p, x), make_epilogue_params(p, x),
                                             make_split_k(slices, scratch));
  GT_CUDA_CHECK_LAUNCH();
}

// The same over clusters: the `slices` blocks that share a tile's k (blockIdx.z) form one cluster, which sums them in
// distributed shared memory (kernels/cluster_split_k.cuh ClusterLeaderSum), so there is no scratch.
template <auto kKernel, class T, int kThreads, std::size_t kSmemBytes>
void launch_skinny_cluster(const GemmProblem& p, const GemmOperands& x, int slices, cudaStream_t s) {
  set_skinny_attributes_once<kKernel, kSmemBytes, T::cluster>();
  const auto z = static_cast<unsigned>(slices);
  const KernelLaunch launch(dim3(grouped_grid_size(T::bm, T::bn, p.m, p.n), 1, z), dim3(1, 1, z), kThreads,
                            kSmemBytes, s);
  GT_CUDA_CALL(cudaLaunchKernelEx(&launch.config, kKernel, operand_a(p, x), operand_b(p, x),
                                  make_epilogue_params(p, x), SplitK{slices, nullptr, nullptr}));
}

}  // namespace gemmtune::kernels
