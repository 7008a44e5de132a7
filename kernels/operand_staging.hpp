// Staging: the TMA copy engine addresses a matrix only with a 16-byte row stride, so an operand whose leading
// dimension is not a multiple of 4 floats (k = 690 for a row-major A) keeps the wgmma kernels on their cp.async
// pipeline. A staged variant (KernelVariant::staged) first copies such an operand into launch scratch with its row
// stride rounded up to 4 floats, then runs the TMA pipeline on the copy. The copy's extra columns are never read: the
// tensor map still has the operand's own extent, and TMA fills past it with zeros.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/compiled_variant.hpp"
#include "kernels/operand_view.cuh"

namespace gemmtune::kernels {

// Floats of v's staged copy: its stored rows × its contiguous extent rounded up to 4; 0 where TMA can read v as it is.
inline std::size_t staged_copy_floats(const OperandView& v) {
  if (v.vec4) return 0;
  const std::int64_t stored_rows = v.k_major ? v.rows : v.k, contiguous = v.k_major ? v.k : v.rows;
  return static_cast<std::size_t>(stored_rows) * static_cast<std::size_t>((contiguous + 3) / 4 * 4);
}

// Where staged copies start: 64-float (256-byte) boundaries, as the copy engine wants its bases. One rule for the
// scratch's sizing (KernelVariant) and for stage_operands' layout.
inline std::size_t staging_boundary(std::size_t floats) { return (floats + 63) / 64 * 64; }

// Floats stage_operands uses for a and b: b's copy after a's, at a boundary.
inline std::size_t staged_copies_floats(const OperandView& a, const OperandView& b) {
  const std::size_t floats_a = staged_copy_floats(a), floats_b = staged_copy_floats(b);
  return floats_b == 0 ? floats_a : staging_boundary(floats_a) + floats_b;
}

// Copies each of a, b that TMA cannot read into scratch.staging (a first, b after it, 256-byte aligned) and points the
// view at its copy. An operand whose copy does not fit the scratch is left as it is (the cp.async pipeline reads it).
// Asynchronous on s, one copy kernel per staged operand.
void stage_operands(OperandView& a, OperandView& b, const LaunchScratch& scratch, cudaStream_t s);

}  // namespace gemmtune::kernels
