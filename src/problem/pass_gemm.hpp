// The GEMMs of a layer's backward step, as problems the tuner measures and the runtime runs.
//
// The backward of Y = act(op(A)·op(B) + bias) is gZ = gY ⊙ act'(Z) ⊙ mask (one elementwise pass that also reduces
// gBias), then two plain GEMMs. Those GEMMs are tuned problems of their own (Pass::GradA, Pass::GradB) whose keys
// carry the FORWARD's m, n, k, layout, output layout and mode, so a layer's three keys differ only in the pass.
// Their epilogue is always "none": act' and the bias reduction are not part of the GEMM, so one tuned entry serves
// every forward epilogue of that shape.
//
// gZ is stored in the forward's output layout (as gY and Z are), and gA, gB in the layouts of A and B, so each
// backward GEMM is an ordinary forward GemmProblem whose op flags absorb every transpose:
//   GradA: gA (m×k) = gZ (m×n) · op(B)ᵀ (n×k)   A' = gZ, B' = B, Y' = gA
//   GradB: gB (k×n) = op(A)ᵀ (k×m) · gZ (m×n)   A' = A,  B' = gZ, Y' = gB
#pragma once

#include "problem/gemm_problem.hpp"

namespace gemmtune {

// The GradA or GradB problem of a forward problem: the forward's fields with `pass` set and no epilogue.
GemmProblem backward_problem(const GemmProblem& forward, Pass pass);

// The plain forward GEMM that computes pass p: p itself for Pass::Forward; for GradA and GradB the m×k×n resp.
// k×n×m product above, with trans flags and output layout derived from p's, and no epilogue.
GemmProblem pass_gemm(const GemmProblem& p);

// The operands of pass_gemm(p) for a GradA/GradB pass: gz is the elementwise pass's output, a, b the forward's
// inputs, grad the gradient to write (gA for GradA, gB for GradB).
GemmOperands pass_gemm_operands(Pass pass, const float* a, const float* b, const float* gz, float* grad);

}  // namespace gemmtune
