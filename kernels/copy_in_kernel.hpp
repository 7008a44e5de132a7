// A copied inside the GEMM kernel (the "_staged_inline" variants): where A's rows are not 16-byte aligned (k % 4 != 0)
// a staged variant copies A into aligned scratch before its TMA kernel, a pass of 2·m·k·4 bytes that the kernel waits
// for (1.20× an aligned twin's time on seed 9716's shapes, results/nvidia-h200/unaligned_vs_aligned_seed9716.json).
// An inline variant launches no copy: up to three of its producer warpgroup's idle warps (as many as the shared memory
// the tile leaves holds landing buffers for), and blocks of their own on SMs the tiles leave idle, copy A in units of
// 32 rows × one k tile while the tiles run, and the lane that issues A's tile copies waits for the units of its row
// panel and k tile.
//
// The units go out from one counter in the order the tiles need them: a band of row panels (as many as one wave of
// tiles covers), k tile by k tile, then the next band. A unit is taken by a running warp and copied without waiting for
// anything, so every wait ends: no deadlock whatever the blocks' schedule.
//
// Tickets (zero before the launch; the last block to finish leaves them zero again, as split-k's):
//   [0] the next unit, [1] the blocks done, [2 + panel · k_tiles + kt] the units of (panel, kt) copied.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/host_device.hpp"

namespace gemmtune::kernels {

constexpr int kCopyUnitRows = 32;  // a warp's lanes take a k tile's 32 columns, row by row
constexpr int kCopyTicketsBefore = 2;

struct InKernelCopy {
  const float* src = nullptr;  // A as stored: `rows` rows of `cols` floats, ld_src apart
  float* dst = nullptr;        // the copy map_a reads, ld_dst apart (a multiple of 4 floats)
  std::int64_t ld_src = 0, ld_dst = 0, rows = 0, cols = 0;
  unsigned* tickets = nullptr;  // null: nothing is copied in the kernel
  int panel_rows = 0;           // the tile's rows: a panel of A that a tile reads whole
  int band_panels = 1;          // panels one wave of tiles covers: the copy's order
};

GT_HOST_DEVICE std::int64_t k_tiles_of(std::int64_t cols, int bk) { return (cols + bk - 1) / bk; }

// Tickets an inline copy of a rows × cols A needs for tiles of panel_rows rows and k tiles of bk.
GT_HOST_DEVICE std::size_t in_kernel_copy_tickets(std::int64_t rows, std::int64_t cols, int panel_rows, int bk) {
  const std::int64_t panels = (rows + panel_rows - 1) / panel_rows;
  return static_cast<std::size_t>(kCopyTicketsBefore + panels * k_tiles_of(cols, bk));
}

}  // namespace gemmtune::kernels
