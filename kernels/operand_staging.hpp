// Staging: the TMA copy engine addresses a matrix only with a 16-byte row stride, so an operand whose leading
// dimension is not a multiple of 4 floats (k = 690 for a row-major A) keeps the wgmma kernels on their cp.async
// pipeline. A staged variant (KernelVariant::staged) first copies such an operand into launch scratch with its row
// stride rounded up to 4 floats, then runs the TMA pipeline on the copy. The copy's extra columns are never read: the
// tensor map still has the operand's own extent, and TMA fills past it with zeros.
//
// The same copy makes TN and TT runnable: tf32 wgmma reads its shared-memory operand (our A) K-major only, so a
// staged variant copies an A stored k×m transposed, into m rows of k. One pass over A (2·m·k·4 bytes: 42 us for the
// 1001×16384 dY of a d_model-4096 weight gradient on the H200) buys the wgmma kernel for a problem the mma.sync family would
// otherwise run, at about half wgmma's speed in 3xtf32 (2349 against 1310 us at 16384×4096×1001 on the H200).
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/compiled_variant.hpp"
#include "kernels/operand_view.cuh"

namespace gemmtune::kernels {

// Floats of v's staged copy: its stored rows × its contiguous extent rounded up to 4 (rows × k rounded up, K-major,
// where the kernel needs it K-major and it is not); 0 where TMA can read v as it is.
inline std::size_t staged_copy_floats(const OperandView& v, bool needs_k_major) {
  const bool transpose = needs_k_major && !v.k_major;
  if (v.vec4 && !transpose) return 0;
  const bool k_major_copy = v.k_major || transpose;
  const std::int64_t stored_rows = k_major_copy ? v.rows : v.k, contiguous = k_major_copy ? v.k : v.rows;
  return static_cast<std::size_t>(stored_rows) * static_cast<std::size_t>((contiguous + 3) / 4 * 4);
}

// Where staged copies start: 64-float (256-byte) boundaries, as the copy engine wants its bases. One rule for the
// scratch's sizing (KernelVariant) and for stage_operands' layout.
inline std::size_t staging_boundary(std::size_t floats) { return (floats + 63) / 64 * 64; }

// Floats stage_operands uses for a (which the wgmma kernels read K-major) and b: b's copy after a's, at a boundary.
inline std::size_t staged_copies_floats(const OperandView& a, const OperandView& b) {
  const std::size_t floats_a = staged_copy_floats(a, true), floats_b = staged_copy_floats(b, false);
  return floats_b == 0 ? floats_a : staging_boundary(floats_a) + floats_b;
}

// Copies each of a, b that TMA cannot read, and an a stored MN-major (transposed into K-major), into scratch.staging
// (a first, b after it, 256-byte aligned) and points the view at its copy. An operand whose copy does not fit the
// scratch is left as it is (the cp.async pipeline reads it), except an MN-major a, which no wgmma kernel can read: an
// InputError. Asynchronous on s: one kernel for the padded copies, one for a transposed a.
void stage_operands(OperandView& a, OperandView& b, const LaunchScratch& scratch, cudaStream_t s);

}  // namespace gemmtune::kernels
