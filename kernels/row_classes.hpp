// Rows that do not start on 16-byte boundaries, read by the copy engine as four matrices that do (issue 49).
//
// The copy engine needs a 16-byte aligned base and row stride; a row-major matrix of ld floats with ld % 4 != 0 has
// neither for most rows. But rows r and r + 4 lie 4·ld floats apart, a multiple of 16 bytes, so the rows of one class
// j (r = 4i + j) form a matrix the copy engine can address: base aligned down to the unit its first row starts in,
// s_j = that start's float in the unit (all its rows share it), ceil((rows − j) / 4) rows of s_j + cols floats,
// stride 4·ld. A box must start on a 16-byte unit too (a box at any other column is an illegal instruction on an
// H200), so a box at column c (c % 4 == 0) holds the row's floats from c − s_j on: its data lands s_j floats right,
// which a reader adds, and the s_j floats before a row (the end of the previous one) are in the map but read only
// into that margin. Columns past the row's end lie outside the map and land as zeros, as at any edge. A tile of R
// rows from row r0 (r0 % 4 == 0) is then four boxes of R / 4 rows, class j's at r0 / 4, stacked in shared memory:
// tile row p holds matrix row 4·(p % (R/4)) + p / (R/4). The wgmma kernels read B so (its rows are k for NN, n for NT),
// their consumers undoing that order as they load their fragments. A's shared tile, which wgmma reads through
// descriptors at 16-byte units, cannot take the shift: it is copied (kernels/operand_staging.hpp) or read by cp.async.
#pragma once

#include <cstdint>

#include "kernels/operand_view.cuh"

namespace gemmtune::kernels {

inline constexpr int kRowClasses = 4;

// Each class needs a row of its own.
inline bool row_classes_fit(std::int64_t rows) { return rows >= kRowClasses; }

// Whether the wgmma TMA kernel reads B by class: B's rows do not allow a plain map, and it has a stored row per class
// (n rows for NT, k rows for NN). Staging (what it leaves uncopied) and the launcher (which maps it builds) ask this.
inline bool b_read_by_class(const OperandView& b) { return !b.vec4 && row_classes_fit(b.k_major ? b.rows : b.k); }

}  // namespace gemmtune::kernels
