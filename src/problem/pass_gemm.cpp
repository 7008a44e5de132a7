#include "problem/pass_gemm.hpp"

#include "common/error.hpp"

namespace gemmtune {

GemmProblem backward_problem(const GemmProblem& forward, Pass pass) {
  GemmProblem p = forward;
  p.pass = pass;
  p.epi = Epilogue{};
  return p;
}

GemmProblem pass_gemm(const GemmProblem& p) {
  if (p.pass == Pass::Forward) return p;
  const bool gz_transposed = p.out == OutputLayout::Transposed;
  GemmProblem g;
  g.mode = p.mode;
  if (p.pass == Pass::GradA) {
    // gA = gZ·op(B)ᵀ. op(B)ᵀ read from B's storage: a row-major k×n B is n×k read transposed, and vice versa.
    g.m = p.m;
    g.n = p.k;
    g.k = p.n;
    g.trans_a = gz_transposed;
    g.trans_b = !p.trans_b;
    g.out = p.trans_a ? OutputLayout::Transposed : OutputLayout::RowMajor;  // gA is stored as A is
  } else {
    // gB = op(A)ᵀ·gZ, likewise with A.
    g.m = p.k;
    g.n = p.n;
    g.k = p.m;
    g.trans_a = !p.trans_a;
    g.trans_b = gz_transposed;
    g.out = p.trans_b ? OutputLayout::Transposed : OutputLayout::RowMajor;  // gB is stored as B is
  }
  return g;
}

GemmOperands pass_gemm_operands(Pass pass, const float* a, const float* b, const float* gz, float* grad) {
  GemmOperands x;
  switch (pass) {
    case Pass::GradA:
      x.A = gz;
      x.B = b;
      break;
    case Pass::GradB:
      x.A = a;
      x.B = gz;
      break;
    case Pass::Forward:
      throw InputError("pass_gemm_operands: the forward pass has its own operands");
  }
  x.Y = grad;
  return x;
}

}  // namespace gemmtune
