// Which output tile a block computes: blocks that run together share rows of A and columns of B in L2.
#pragma once

#include <cstdint>

namespace gemmtune::kernels {

struct BlockTile {
  std::int64_t row0, col0;
};

// Tile `id` in groups of kGroupRows tile-rows, column by column inside a group (Triton's "grouped ordering"):
// consecutive tiles reuse the same few A row-panels and B column-panels, so large problems stay in L2.
__device__ __forceinline__ BlockTile grouped_tile(std::int64_t id, int bm, int bn, std::int64_t m, std::int64_t n) {
  constexpr std::int64_t kGroupRows = 8;
  const std::int64_t tiles_m = (m + bm - 1) / bm;
  const std::int64_t tiles_n = (n + bn - 1) / bn;
  const std::int64_t per_group = kGroupRows * tiles_n;
  const std::int64_t first_m = (id / per_group) * kGroupRows;
  const std::int64_t group_rows = tiles_m - first_m < kGroupRows ? tiles_m - first_m : kGroupRows;
  const std::int64_t in_group = id % per_group;
  return {(first_m + in_group % group_rows) * bm, (in_group / group_rows) * bn};
}

// A block's tile when each block computes one (persistent blocks walk grouped_tile over their own indices).
__device__ __forceinline__ BlockTile grouped_block_tile(int bm, int bn, std::int64_t m, std::int64_t n) {
  return grouped_tile(blockIdx.x, bm, bn, m, n);
}

inline unsigned grouped_grid_size(int bm, int bn, std::int64_t m, std::int64_t n) {
  return static_cast<unsigned>(((m + bm - 1) / bm) * ((n + bn - 1) / bn));
}

}  // namespace gemmtune::kernels
