// Staging: the TMA copy engine addresses a matrix only with a 16-byte row stride, so an operand whose leading
// dimension is not a multiple of 4 floats (k = 690 for a row-major A) keeps the wgmma kernels on their cp.async
// pipeline, unless it is B, which the TMA kernel reads by class of rows (kernels/row_classes.hpp). A staged
// variant (KernelVariant::staged) first copies any other such operand into launch scratch with its row stride rounded
// up to 4 floats, then runs the TMA pipeline on the copy. The copy's extra columns are never read: the
// tensor map still has the operand's own extent, and TMA fills past it with zeros.
//
// The same copy makes TN and TT runnable: tf32 wgmma reads its shared-memory operand (our A) K-major only, so a
// staged variant copies an A stored k×m transposed, into m rows of k. One pass over A (2·m·k·4 bytes: 42 us for the
// 1001×16384 dY of a d_model-4096 weight gradient on the H200) buys the wgmma kernel for a problem the mma.sync family
// would otherwise run, at about half wgmma's speed in 3xtf32 (2349 against 1310 us at 16384×4096×1001 on the H200).
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/compiled_variant.hpp"
#include "kernels/operand_view.cuh"
#include "kernels/row_classes.hpp"

namespace gemmtune::kernels {

// The copy a staged variant makes of v: K-major where v is, or where the kernel needs it so and v is not (transposed),
// else as v is stored; `rows` stored rows of `cols` floats, `ld` apart (cols rounded up to 4). `floats` is 0 where TMA
// can read v as it is: nothing is copied then. That includes B over at least 4 stored rows, which the TMA kernel reads
// by class of rows (kernels/row_classes.hpp).
struct StagedCopy {
  bool transposed;
  std::int64_t rows, cols, ld;
  std::size_t floats;
};

inline StagedCopy staged_copy(const OperandView& v, bool needs_k_major) {
  const bool transposed = needs_k_major && !v.k_major, k_major_copy = v.k_major || transposed;
  const std::int64_t rows = k_major_copy ? v.rows : v.k, cols = k_major_copy ? v.k : v.rows, ld = (cols + 3) / 4 * 4;
  const bool copied = transposed || (!v.vec4 && (needs_k_major || !b_read_by_class(v)));
  return {transposed, rows, cols, ld, copied ? static_cast<std::size_t>(rows) * static_cast<std::size_t>(ld) : 0};
}

// Where staged copies start: 64-float (256-byte) boundaries, as the copy engine wants its bases. One rule for the
// scratch's sizing (KernelVariant) and for stage_operands' layout.
inline std::size_t staging_boundary(std::size_t floats) { return (floats + 63) / 64 * 64; }

// Floats stage_operands uses for a (which the wgmma kernels read K-major) and b: b's copy after a's, at a boundary.
inline std::size_t staged_copies_floats(const OperandView& a, const OperandView& b) {
  const std::size_t floats_a = staged_copy(a, true).floats, floats_b = staged_copy(b, false).floats;
  return floats_b == 0 ? floats_a : staging_boundary(floats_a) + floats_b;
}

// Copies each of a, b that TMA cannot read, and an a stored MN-major (transposed into K-major), into scratch.staging
// (a first, b after it, 256-byte aligned) and points the view at its copy. An operand whose copy does not fit the
// scratch is left as it is (the cp.async pipeline reads it), except an MN-major a, which no wgmma kernel can read: an
// InputError. Asynchronous on s: one kernel for the padded copies, one for a transposed a. True where it launched
// any: the kernel that reads the copies may then be launched behind them (KernelLaunch's behind_previous).
bool stage_operands(OperandView& a, OperandView& b, const LaunchScratch& scratch, cudaStream_t s);

}  // namespace gemmtune::kernels
