// Split-k for the families that finish through an OutputTile: a small problem has too few output tiles to fill the
// GPU (256³ in 64×64 tiles is 16 blocks for 132 SMs), so `slices` blocks (blockIdx.z) share each tile's k range.
//
// Every slice's block leaves its partial tile in scratch and takes a ticket; the block that draws the last ticket adds
// the slices in slice order, s = 0, 1, …, and runs the fused epilogue. The sum's order does not depend on which block
// is last, so results are deterministic; there are no float atomics and no second kernel.
#pragma once

#include <cstdint>

#include "kernels/compiled_variant.hpp"

namespace gemmtune::kernels {

struct SplitK {
  int slices;
  float* partials;  // [tile][slice][kRows·kCols]
  unsigned* tickets;  // [tile]
  int streamed_blocks = 0;  // Stream-K (kernels/stream_k.cuh): StreamKSchedule::streamed_blocks_for, on the host
};

inline SplitK make_split_k(int slices, const LaunchScratch& scratch) {
  return {slices, scratch.partials, scratch.tickets};
}

// Split-k pays only where the unsplit grid leaves SMs idle: only tiles up to kMaxTileFloats (each family's choice; the
// wgmma family lists its split tiles instead, wgmma_tf32_gemm.cu WgmmaSplitTiles) get a split instantiation, and the
// registry a variant per slice count.
template <class T, int kMaxTileFloats>
constexpr bool has_split_k() {
  return T::bm * T::bn <= kMaxTileFloats;
}

#if defined(__CUDACC__)
struct KTileRange {
  int begin, end;
};

// This block's share of the k tiles: as even as integers allow. A slice may be empty when k has fewer tiles than there
// are slices; its partial is then zero. Unsplit kernels take all of k.
template <bool kSplitK>
__device__ __forceinline__ KTileRange slice_k_tiles(int k_tiles, int slices) {
  if constexpr (!kSplitK) return {0, k_tiles};
  // 32-bit: k_tiles · slices stays far below 2^32, and a 64-bit division would be a call that costs registers.
  const unsigned s = blockIdx.z, tiles = static_cast<unsigned>(k_tiles), n = static_cast<unsigned>(slices);
  return {static_cast<int>(tiles * s / n), static_cast<int>(tiles * (s + 1) / n)};
}

// The barrier among the threads that hold the tile: the whole block, unless a kernel's warps specialize (wgmma: the
// consumer warpgroups hold it, and the producer's warps are elsewhere).
struct WholeBlockBarrier {
  __device__ void operator()() const { __syncthreads(); }
};

// Call with the block's accumulators in `tile` (after the barrier that follows every put); threads 0 … kThreads − 1
// call it, and `barrier` synchronizes exactly them. Returns true when this block holds the tile's whole sum and should
// run the epilogue; false when another slice's block will. kBatch: how many of a thread's elements it sums at once
// (all by default; fewer where registers are capped). kSlicesInFlight: how many slices' partials it loads before
// adding them (still in slice order). The last block sums while every other block of the tile is done, so its reads
// are the tile's tail: one slice at a time they are a chain of L2 round trips as long as the slice count, which the
// skinny families split up to 64 ways.
template <class Output, int kRows, int kCols, int kThreads, int kBatch = kRows * kCols / kThreads,
          class Barrier = WholeBlockBarrier, int kSlicesInFlight = 1>
__device__ __forceinline__ bool gather_split_k(float* tile, const SplitK& split, int tid, Barrier barrier = {}) {
  constexpr int kFloats = kRows * kCols;
  constexpr int kPerThread = kFloats / kThreads;
  static_assert(kFloats % kThreads == 0, "threads split the tile evenly");
  const int slice = static_cast<int>(blockIdx.z);
  float* const partials = split.partials + std::size_t{blockIdx.x} * split.slices * kFloats;
  const auto at = [&](int j) -> float& {
    const int i = tid + j * kThreads;
    return tile[i / kCols * Output::kStride + i % kCols];
  };
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) __stcg(partials + slice * kFloats + tid + j * kThreads, at(j));
  // Release: this block's partial is visible device-wide before its ticket is.
  __threadfence();
  barrier();
  __shared__ unsigned ticket;
  if (tid == 0) ticket = atomicAdd(split.tickets + blockIdx.x, 1u);
  barrier();
  if (ticket != static_cast<unsigned>(split.slices - 1)) return false;
  __threadfence();  // acquire: the other slices' partials, published before their tickets

  // kSlicesInFlight slices at a time, a batch of a thread's elements each: kBatch·kSlicesInFlight loads in flight,
  // then added in slice order, so the sum does not depend on how many were in flight.
  static_assert(kPerThread % kBatch == 0, "whole batches");
  static_assert(kSlicesInFlight >= 1, "at least one slice at a time");
#pragma unroll 1
  for (int j0 = 0; j0 < kPerThread; j0 += kBatch) {
    float sum[kBatch];
#pragma unroll 1
    for (int s0 = 0; s0 < split.slices; s0 += kSlicesInFlight) {
      float v[kSlicesInFlight][kBatch];
#pragma unroll
      for (int i = 0; i < kSlicesInFlight; ++i) {
        const int s = s0 + i;
        const float* const part = partials + s * kFloats + tid + j0 * kThreads;
#pragma unroll
        for (int j = 0; j < kBatch; ++j)
          v[i][j] = s >= split.slices ? 0.f : s == slice ? at(j0 + j) : __ldcg(part + j * kThreads);
      }
#pragma unroll
      for (int i = 0; i < kSlicesInFlight; ++i)
#pragma unroll
        for (int j = 0; j < kBatch; ++j)
          if (s0 + i < split.slices) sum[j] = s0 + i == 0 ? v[i][j] : sum[j] + v[i][j];
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j) at(j0 + j) = sum[j];
  }
  // Every slice has drawn its ticket, so none is left to count: the next launch starts from zero.
  if (tid == 0) split.tickets[blockIdx.x] = 0;
  barrier();
  return true;
}
#endif

}  // namespace gemmtune::kernels
