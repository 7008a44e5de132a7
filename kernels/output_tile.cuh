// A block's finished accumulators go through shared memory before the epilogue: fragments land wherever the mma or
// thread-tile layout puts them, but from shared memory each warp writes whole rows of Y (or whole columns for the
// transposed store) with consecutive lanes on consecutive addresses. It also keeps the epilogue code (activation,
// Philox) in one short loop instead of inlined once per accumulator, which is most of the compile time saved.
#pragma once

#include <cstdint>

#include "kernels/epilogue.cuh"
#include "kernels/tile_schedule.cuh"

namespace gemmtune::kernels {

template <int kRows, int kCols, int kThreads>
struct OutputTile {
  // The odd stride keeps both the row-wise and the column-wise walk free of bank conflicts.
  static constexpr int kStride = kCols + 1;
  static constexpr std::size_t kBytes = std::size_t{kRows} * kStride * sizeof(float);

  __device__ static void put(float* tile, int r, int c, float value) { tile[r * kStride + c] = value; }

  // Call after a barrier that follows every thread's put().
  // Unrolled 4 deep so each thread has several elements' loads and stores in flight, not one latency chain each.
  __device__ static void finish(const float* tile, const EpilogueParams& e, BlockTile block, int tid) {
    static_assert(kRows * kCols % kThreads == 0, "threads split the tile evenly");
#pragma unroll 4
    for (int it = 0; it < kRows * kCols / kThreads; ++it) {
      const int i = tid + it * kThreads;
      const int r = e.transposed ? i % kRows : i / kCols;
      const int c = e.transposed ? i / kRows : i % kCols;
      store_output_element(e, block.row0 + r, block.col0 + c, tile[r * kStride + c]);
    }
  }
};

}  // namespace gemmtune::kernels
