// Rows that do not start on 16-byte boundaries, read by the copy engine as several matrices that do (issue 49).
//
// The copy engine needs a 16-byte aligned base and row stride; a row-major matrix of ld floats with ld % 4 != 0 has
// neither for most rows. But rows r and r + c lie c·ld floats apart, a multiple of 4c bytes, so with c = 4 classes
// the rows of one class j (r = 4i + j) form a matrix the copy engine can address: base aligned down to the unit its
// first row starts in, s_j = that start's float in the unit (all its rows share it), ceil((rows − j) / 4) rows of
// s_j + cols floats, stride 4·ld. A box must start on a 16-byte unit too (a box at any other column is an illegal
// instruction on an H200), so a box at column c (c % 4 == 0) holds the row's floats from c − s_j on: its data lands
// s_j floats right, which a reader adds, and the s_j floats before a row (the end of the previous one) are in the map
// but read only into that margin. Columns past the row's end lie outside the map and land as zeros, as at any edge.
// A tile of R rows from row r0 (r0 % c == 0) is then c boxes of R / c rows, class j's at r0 / c, stacked in shared
// memory. The wgmma kernels read B so (its rows are k for NN, n for NT), their consumers undoing that order as they
// load their fragments. A's shared tile, which wgmma reads through descriptors at 16-byte units, cannot take the
// shift: it is copied (kernels/operand_staging.hpp) or read by cp.async.
//
// NN takes 8 classes, aligned to 32-byte sectors: with 4, every other row of a class starts 16 bytes into a sector,
// and L2 served those boxes in 2.8× the requests of aligned rows for the same bytes (ncu, H200, 2080×2949×2784 tf32,
// 192×128 tile: 11.8M against 4.2M requests, 31% slower than n = 2952). Rows 8 apart lie 32·ld bytes apart, so every
// row of a class starts where its first does. NT keeps 4 (its class tile's rows have room for shifts up to 3 only).
#pragma once

#include <cstdint>

#include "kernels/operand_view.cuh"

namespace gemmtune::kernels {

inline constexpr int kMaxRowClasses = 8;
// B's classes: over k rows for NN (8), over n rows for NT (k-major B: 4).
constexpr int row_classes(bool k_major) { return k_major ? 4 : 8; }

// Whether the wgmma TMA kernel reads B by class: B's rows do not allow a plain map, and it has a stored row per class
// (n rows for NT, k rows for NN). Staging (what it leaves uncopied) and the launcher (which maps it builds) ask this.
// Each class needs a row of its own.
inline bool b_read_by_class(const OperandView& b) {
  return !b.vec4 && (b.k_major ? b.rows : b.k) >= row_classes(b.k_major);
}

}  // namespace gemmtune::kernels
