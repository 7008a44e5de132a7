// Split-k inside a thread-block cluster (sm_90). The kSlices blocks that share an output tile's k (blockIdx.z is the
// slice) form one cluster, so the hardware runs them at the same time and each can read the others' accumulators in
// distributed shared memory. Block r adds rows [r·kRows/kSlices, (r + 1)·kRows/kSlices) of every slice's tile and runs
// the fused epilogue on them: the reduction and the epilogue are shared by all of a tile's blocks, with no partials in
// global memory, no tickets and no scratch. split_k.cuh leaves both to the one block that finishes last, which at
// 1024³ fp32 cost ~9 µs of a 60 µs GEMM. The sum runs in slice order, s = 0, 1, …, as split_k.cuh's does, so the
// results do not depend on timing.
#pragma once

#include <cstdint>

#include "kernels/cluster.cuh"
#include "kernels/epilogue.cuh"
#include "kernels/output_tile.cuh"
#include "kernels/ptx.cuh"
#include "kernels/split_k.cuh"
#include "kernels/tile_schedule.cuh"

namespace gemmtune::kernels {

// Whether a tile's rows split evenly into kSlices blocks' shares that are output tiles of their own: what
// ClusterSplitK requires, and what a launcher asks before it instantiates one.
template <int kRows, int kCols, int kThreads, int kSlices>
constexpr bool cluster_split_fits() {
  return kRows % kSlices == 0 && kRows / kSlices % 8 == 0 && kRows / kSlices * kCols % (4 * kThreads) == 0 &&
         kRows / kSlices % (kThreads / (kCols / 4)) == 0;
}

template <int kRows, int kCols, int kThreads, int kSlices>
struct ClusterSplitK {
  using Output = OutputTile<kRows, kCols, kThreads>;
  static constexpr int kSliceRows = kRows / kSlices;
  // The block's rows of the tile: the same row stride, so it is an output tile of its own.
  using SliceOutput = OutputTile<kSliceRows, kCols, kThreads>;
  static_assert(cluster_split_fits<kRows, kCols, kThreads, kSlices>() && SliceOutput::kStride == Output::kStride,
                "whole rows per block, which its threads split evenly");
  static constexpr int kVectorsPerThread = kSliceRows * kCols / 4 / kThreads;

  // Call with the block's accumulators put into `tile`; threads 0 … kThreads − 1 call it, `barrier` synchronizes
  // exactly them, and the block exits after. Any other threads of the block (wgmma's producer) must meet the two
  // cluster barriers in here with two cluster::sync() of their own. The tile's first skip_rows rows are the tile
  // above's (a last row tile moved up to end at row m): summed like the rest, not stored.
  template <class Barrier = WholeBlockBarrier>
  __device__ static void finish(float* tile, const EpilogueParams& e, BlockTile block, int tid, Barrier barrier = {},
                                int skip_rows = 0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cluster::sync();  // every block's accumulators are in its shared memory
    const int row_begin = static_cast<int>(cluster::rank()) * kSliceRows;
    const std::uint32_t tile_address = ptx::smem_address(tile);
    const auto offset = [&](int j) {
      const int v = tid + j * kThreads;
      return (row_begin + v / (kCols / 4)) * Output::kStride + v % (kCols / 4) * 4;
    };
    float4 sum[kVectorsPerThread];
#pragma unroll
    for (int s = 0; s < kSlices; ++s)
#pragma unroll
      for (int j = 0; j < kVectorsPerThread; ++j) {
        const std::uint32_t local = tile_address + static_cast<std::uint32_t>(offset(j)) * sizeof(float);
        const float4 part = cluster::load_float4(cluster::peer_address(local, static_cast<std::uint32_t>(s)));
        sum[j] = s == 0 ? part
                        : make_float4(sum[j].x + part.x, sum[j].y + part.y, sum[j].z + part.z, sum[j].w + part.w);
      }
    // Only this block reads its own rows, so the sums may replace them while the others still read theirs.
#pragma unroll
    for (int j = 0; j < kVectorsPerThread; ++j) *reinterpret_cast<float4*>(tile + offset(j)) = sum[j];
    barrier();
    const int skip = min(max(skip_rows - row_begin, 0), kSliceRows);  // of this block's slice, the tile above's rows
    SliceOutput::finish(tile + (row_begin + skip) * Output::kStride, e, {block.row0 + row_begin + skip, block.col0},
                        tid, kSliceRows - skip);
    cluster::sync();  // the other blocks are done reading this block's shared memory before it exits
#else
    (void)tile, (void)e, (void)block, (void)tid, (void)barrier, (void)skip_rows;
    __trap();  // clustered variants are refused below compute capability 9.0 (registry device limits)
#endif
  }
};

// The skinny family's k split over a cluster (kernels/skinny_gemm.cu, tiles with T::cluster > 1). Its tiles have 8-32
// rows, too few to share out among up to 8 blocks as ClusterSplitK does, and a decode call is a few microseconds long:
// what split_k.cuh's tickets cost it is the chain of L2 round trips at its end (each slice's partial written and
// fenced, a ticket, the last block's reads), whose length also moves with where the ticket lies (3.5-4.1% at
// 8×64×1216 on the H200, results/nvidia-h200/scratch_placement_probe.txt). Here the cluster's first block reads every
// block's tile from distributed shared memory, adds them in slice order (as split_k.cuh does, so the two give the same
// bits) and runs the epilogue; the others wait until it has read them, then exit.
//
//   tile₀ ← Σ_{s=0}^{slices−1} tile_s      (block s of the cluster holds slice s's tile; slices ≤ kMaxSlices)
template <class Output, int kRows, int kCols, int kThreads, int kMaxSlices>
struct ClusterLeaderSum {
  static constexpr int kVectors = kRows * kCols / 4;
  static constexpr int kPerThread = (kVectors + kThreads - 1) / kThreads;
  static_assert(kCols % 4 == 0, "whole float4s per row");

  // Call with the block's accumulators put into `tile` and the block synchronized after; every thread of the block
  // calls it. Returns true in the block that holds the sum, which then runs the epilogue.
  __device__ static bool sum(float* tile, int slices, int tid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cluster::sync();  // every block's tile is in its shared memory
    const bool leader = cluster::rank() == 0;
    if (leader) {
      const std::uint32_t tile_address = ptx::smem_address(tile);
      const auto offset = [](int v) { return v / (kCols / 4) * Output::kStride + v % (kCols / 4) * 4; };
      // Every slice's loads issued before any is added: one round trip to the other blocks, not one per slice.
      float4 part[kMaxSlices][kPerThread];
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) {
        const int v = tid + j * kThreads;
        if (v >= kVectors) continue;
        part[0][j] = *reinterpret_cast<const float4*>(tile + offset(v));
#pragma unroll
        for (int s = 1; s < kMaxSlices; ++s)
          if (s < slices)
            part[s][j] = cluster::load_float4(cluster::peer_address(
                tile_address + static_cast<std::uint32_t>(offset(v)) * sizeof(float), static_cast<std::uint32_t>(s)));
      }
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) {
        const int v = tid + j * kThreads;
        if (v >= kVectors) continue;
        float4 sum = part[0][j];
#pragma unroll
        for (int s = 1; s < kMaxSlices; ++s)
          if (s < slices)
            sum = make_float4(sum.x + part[s][j].x, sum.y + part[s][j].y, sum.z + part[s][j].z, sum.w + part[s][j].w);
        *reinterpret_cast<float4*>(tile + offset(v)) = sum;
      }
    }
    cluster::sync();  // the leader has read every tile (and its own sums are visible to its threads) before any exits
    return leader;
#else
    (void)tile, (void)slices, (void)tid;
    __trap();  // clustered variants are refused below compute capability 9.0 (registry device limits)
    return false;
#endif
  }
};

}  // namespace gemmtune::kernels
