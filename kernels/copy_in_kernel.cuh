// The device side of A copied inside the GEMM kernel (kernels/copy_in_kernel.hpp): the warps that copy units, the
// wait of the lane that issues A's tile copies, and the reset of the tickets by the last block.
#pragma once

#include <cstdint>

#include "kernels/copy_in_kernel.hpp"
#include "kernels/ptx.cuh"

namespace gemmtune::kernels::inline_copy {

// Orders this thread's generic-proxy accesses of global memory with its async-proxy ones: the copy's stores (written
// here) before the copy engine's loads of them (issued by another block, after it has acquired the unit's count).
__device__ __forceinline__ void fence_async_global() { asm volatile("fence.proxy.async.global;\n" ::: "memory"); }

__device__ __forceinline__ unsigned load_relaxed(const unsigned* p) {
  unsigned v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}

struct Unit {
  std::int64_t row0;
  int kt, panel;
};

// Units of 32 rows: row group g is panel g / groups_per_panel's. A band is band_panels panels' row groups; its units
// go k tile by k tile (all its row groups' k tile 0, then k tile 1, ...), so the tiles of one wave, which start
// together at k tile 0, find theirs copied in the order they read them.
struct UnitOrder {
  unsigned row_groups, groups_per_panel, band_groups, k_tiles;

  __device__ UnitOrder(const InKernelCopy& c, int bk)
      : row_groups(static_cast<unsigned>((c.rows + kCopyUnitRows - 1) / kCopyUnitRows)),
        groups_per_panel(static_cast<unsigned>(c.panel_rows / kCopyUnitRows)),
        band_groups(static_cast<unsigned>(c.band_panels) * groups_per_panel),
        k_tiles(static_cast<unsigned>(k_tiles_of(c.cols, bk))) {}

  __device__ unsigned units() const { return row_groups * k_tiles; }

  __device__ Unit at(unsigned u) const {
    const unsigned per_band = band_groups * k_tiles, band = u / per_band, in_band = u - band * per_band;
    const unsigned first = band * band_groups, groups = min(band_groups, row_groups - first);
    const unsigned group = first + in_band % groups;
    return {std::int64_t{group} * kCopyUnitRows, static_cast<int>(in_band / groups),
            static_cast<int>(group / groups_per_panel)};
  }

  // Units of (panel, any k tile): its row groups.
  __device__ unsigned units_of_panel(std::int64_t panel) const {
    const std::int64_t left = std::int64_t{row_groups} - panel * groups_per_panel;
    return static_cast<unsigned>(left < groups_per_panel ? left : groups_per_panel);
  }
};

__device__ __forceinline__ unsigned* copied_counts(const InKernelCopy& c) { return c.tickets + kCopyTicketsBefore; }

constexpr int kCopyUnitFloats = kCopyUnitRows * 32;
// Landing buffers per copying warp: a unit in flight while the one before is stored.
constexpr int kCopySlotsPerWarp = 2;
constexpr int kCopyWarpBytes = kCopySlotsPerWarp * kCopyUnitFloats * 4;

// A warp takes units from the counter until none is left and copies each: lane l moves column kt·bk + l of the unit's
// rows, by 4-byte cp.async into this warp's landing buffers (`landing`, kCopySlotsPerWarp units), so that a unit's
// 4 KB are in flight while the last one is stored without holding registers (with 16 register-held loads a lane, a
// warp copied ~1 GB/s and the inline variants lost 1.21x to a copy kernel). Each lane reads back only the column it
// landed, stores it to the aligned copy, and the warp releases the unit's count. Every lane of the warp calls it.
template <int kBk>
__device__ void copy_units(const InKernelCopy& c, float* landing) {
  static_assert(kBk == 32, "a lane per column of a k tile");
  const int lane = static_cast<int>(threadIdx.x % 32);
  const UnitOrder order(c, kBk);
  const unsigned units = order.units(), none = ~0u;
  const auto take = [&]() {
    unsigned u = 0;
    if (lane == 0) u = atomicAdd(c.tickets, 1u);
    u = __shfl_sync(~0u, u, 0);
    return u < units ? u : none;
  };
  const auto issue = [&](unsigned u, float* slot) {
    const Unit unit = order.at(u);
    const std::int64_t col = std::int64_t{unit.kt} * kBk + lane;
    const std::int64_t rows_left = c.rows - unit.row0;
    const float* src = c.src + unit.row0 * c.ld_src + col;
    for (int r = 0; r < kCopyUnitRows; ++r) {
      const bool inside = r < rows_left && col < c.cols;
      ptx::cp_async_4(slot + r * 32 + lane, inside ? src + r * c.ld_src : c.src, inside ? 4 : 0);
    }
    ptx::cp_async_commit();
  };
  const auto store = [&](unsigned u, const float* slot) {
    const Unit unit = order.at(u);
    const std::int64_t col = std::int64_t{unit.kt} * kBk + lane;
    const std::int64_t rows_left = c.rows - unit.row0;
    if (col < c.cols) {
      float* dst = c.dst + unit.row0 * c.ld_dst + col;
      for (int r = 0; r < kCopyUnitRows && r < rows_left; ++r) dst[r * c.ld_dst] = slot[r * 32 + lane];
      fence_async_global();
    }
    __threadfence();  // release: every lane's stores are visible device-wide before the count that announces them
    __syncwarp();
    if (lane == 0) atomicAdd(copied_counts(c) + unit.panel * order.k_tiles + unit.kt, 1u);
  };
  float* const slot0 = landing;
  float* const slot1 = landing + kCopyUnitFloats;
  unsigned first = take();
  if (first == none) return;
  issue(first, slot0);
  for (;;) {
    const unsigned second = take();
    if (second != none) {
      issue(second, slot1);
      ptx::cp_async_wait<1>();
    } else {
      ptx::cp_async_wait<0>();
    }
    store(first, slot0);
    if (second == none) return;
    first = take();
    if (first != none) {
      issue(first, slot0);
      ptx::cp_async_wait<1>();
    } else {
      ptx::cp_async_wait<0>();
    }
    store(second, slot1);
    if (first == none) return;
  }
}

// What the lane that issues one tile's A copies knows of its panel: k tiles before `ready_` are copied. It looks
// kLookahead counts ahead with one round trip, so that a copy done long ago costs a load every few k tiles.
class CopiedKTiles {
 public:
  template <int kBk>
  __device__ static CopiedKTiles of_panel(const InKernelCopy& c, std::int64_t row0, int k_begin) {
    if (!c.tickets) return CopiedKTiles(nullptr, 0, 0);
    const UnitOrder order(c, kBk);
    const std::int64_t panel = row0 / c.panel_rows;
    return CopiedKTiles(copied_counts(c) + panel * order.k_tiles, order.units_of_panel(panel), k_begin);
  }

  // Returns once k tile kt (of k tiles up to k_end) of the panel is copied, and orders the copy before this thread's
  // next tensor copies.
  __device__ void wait(int kt, int k_end) {
    if (!counts_ || kt < ready_) return;
    constexpr int kLookahead = 8;
    for (;;) {
      unsigned seen[kLookahead];
#pragma unroll
      for (int i = 0; i < kLookahead; ++i) seen[i] = kt + i < k_end ? load_relaxed(counts_ + kt + i) : 0u;
      int copied = 0;
      bool run = true;
#pragma unroll
      for (int i = 0; i < kLookahead; ++i) {
        run = run && kt + i < k_end && seen[i] == need_;
        copied += run ? 1 : 0;
      }
      if (copied > 0) {
        ready_ = kt + copied;
        break;
      }
      __nanosleep(200);
    }
    __threadfence();  // acquire: the units' stores, released before their counts
    fence_async_global();
  }

 private:
  __device__ CopiedKTiles(const unsigned* counts, unsigned need, int ready)
      : counts_(counts), need_(need), ready_(ready) {}
  const unsigned* counts_;
  unsigned need_;
  int ready_;
};

// After the block's last use of the tickets (every thread of it that took units or waited has passed a barrier): one
// warp counts the block done, and the warp of the last block zeroes the tickets for the next launch.
__device__ __forceinline__ void finish_block(const InKernelCopy& c, std::size_t ticket_count) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const unsigned blocks = gridDim.x * gridDim.y * gridDim.z;
  unsigned done = 0;
  if (lane == 0) {
    __threadfence();
    done = atomicAdd(c.tickets + 1, 1u);
  }
  if (__shfl_sync(~0u, done, 0) != blocks - 1) return;
  __threadfence();  // acquire: every other block is done with the tickets
  for (std::size_t i = static_cast<std::size_t>(lane); i < ticket_count; i += 32) c.tickets[i] = 0u;
}

// The tickets an inline copy uses: kCopyTicketsBefore, then a count per (panel, k tile).
template <int kBk>
__device__ __forceinline__ std::size_t ticket_count(const InKernelCopy& c) {
  return in_kernel_copy_tickets(c.rows, c.cols, c.panel_rows, kBk);
}

}  // namespace gemmtune::kernels::inline_copy
