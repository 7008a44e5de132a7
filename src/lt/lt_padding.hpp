// LtPadding: cuBLASLt's GEMM on copies of the operands whose rows are 16-byte aligned, into an aligned output.
//
// Where a stored matrix's leading dimension is not a multiple of 4 floats, its rows do not start on 16-byte
// boundaries, and every cuBLASLt algo the heuristic offers runs its unaligned kernels: about 20% of the tf32 peak on
// the H200, for PyTorch's call too (results/nvidia-h200/unaligned_padding_probe.json: 2759x7137x677 bias+gelu, 339 us
// eager). Inductor's max-autotune pads instead; the same GEMM on zero-padded copies with an aligned output ran 151 us
// there, 182 us with the copies. A padded candidate does that inside one call:
//   1. m, n and k are each rounded up to 4 where they are a stored matrix's leading dimension (A's, B's or Y's);
//   2. A and B are copied into scratch with those dimensions, zero-filled (a zero k-column of A meets a zero k-row
//      of B, so the padded product's first m×n is A·B); an operand whose stored shape does not change is read in place;
//   3. cuBLASLt computes the padded plain GEMM into scratch D (m'×n', aligned), or, where Y's stored shape does not
//      change (only k was padded: the gradient of B over an odd token count), into the caller's output itself;
//   4. our epilogue kernel reads D's first m×n and writes Y (and Z): bias, activation, dropout, save_z. In place
//      where there was no D, and not at all where the problem has no epilogue: a copy of m×n floats and a launch
//      fewer (cuBLASLt cannot write rows that are not 16-byte aligned at speed, so a changed Y keeps its D:
//      scripts/dev/lt_ld_padding_probe.cu, kernels/PERFORMANCE.md).
// The scratch is zeroed once when it is allocated: the copies write every padded row they cover, so the rows past an
// operand's own (k's padding, where k is the stored row count) stay zero across calls, and D is written whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "kernels/padded_copy.hpp"
#include "problem/gemm_problem.hpp"

namespace gemmtune {

// A row-major stored matrix: its rows and row length as given, and as padded.
struct StoredShape {
  std::int64_t rows = 0, cols = 0;
  std::int64_t padded_rows = 0, padded_cols = 0;
  bool changes() const { return rows != padded_rows || cols != padded_cols; }
  std::size_t padded_floats() const {
    return static_cast<std::size_t>(padded_rows) * static_cast<std::size_t>(padded_cols);
  }
};

struct LtPadding {
  GemmProblem padded;    // p's layout and mode on the padded dimensions, with no epilogue
  StoredShape a, b, y;   // A, B and Y (D in scratch) as stored
  // Where each copy starts in the scratch (floats, 64-float aligned); a copy that is not made takes no room, and
  // neither does D where Y's stored shape does not change (d_at is then the end of the copies).
  std::size_t a_at = 0, b_at = 0, d_at = 0;
  std::size_t floats = 0;  // the scratch a call needs
};

// Beyond this a padded candidate is not offered: its copies would cost more than the slow kernels they replace.
constexpr std::size_t kMaxPaddingFloats = std::size_t{64} << 20;  // 256 MiB

// The padding of p's GEMM (problem/pass_gemm.hpp: the plain GEMM a pass runs); nullopt where every stored matrix's
// rows are 16-byte aligned already (no dimension to pad).
std::optional<LtPadding> lt_padding(const GemmProblem& gemm);

// What one padded call of x reads and writes in `padding` (LtPadding::floats of scratch): the copies to make (A's, B's,
// as copy_rows_padded takes them; only those whose stored shape changes), and the operands cuBLASLt then reads (a copy,
// or x's own where it has none) and D, the padded product our epilogue kernel reads: nullptr where Y's stored shape
// does not change, and cuBLASLt writes the caller's output in place.
struct PaddedCall {
  kernels::PaddedCopy copies[2];
  int n_copies = 0;
  const float* a = nullptr;
  const float* b = nullptr;
  float* d = nullptr;
};
PaddedCall padded_call(const LtPadding& pad, const GemmOperands& x, float* padding);

}  // namespace gemmtune
