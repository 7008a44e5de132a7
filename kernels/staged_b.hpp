// The "_staged_b" twin of a staged variant (KernelVariant::stages_b) copies B as well where the copy engine would read
// it by class of rows (kernels/row_classes.hpp), so its kernel reads both operands as an aligned problem's. For a small
// problem one pass over B costs less than reading it by class: per k tile eight boxes of a few rows each, not one
// (353×263×1598 tf32 bias+gelu on an H200: 13.6 µs per call with A copied and B read by class, 11.65 with both
// copied, 8.8 for the aligned 353×264×1600; results/nvidia-h200/staged_b_sweep_seed9709.json, staged_small_ncu.txt).
// Apart from the staged variants' header so that the kernels, which only call stage_operands, do not depend on it.
#pragma once

#include <cstddef>

#include "kernels/operand_view.cuh"

namespace gemmtune::kernels {

// Floats of a _staged_b launch's copies: what a staged variant copies, and B whole where it would be read by class;
// B's copy after A's at a 64-float boundary. stage_operands copies B so exactly where its scratch holds this much.
std::size_t staged_b_copies_floats(const OperandView& a, const OperandView& b);

}  // namespace gemmtune::kernels
