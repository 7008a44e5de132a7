// The routing rule of `gemmtune apply`: whether one intercepted cuBLAS or cuBLASLt call may run through gemmtune's
// runtime instead, and as which row-major problem, or why it passes through to the library untouched.
//
// The mapping from a call to a problem is trace's (trace/blas_call.hpp, trace/lt_call.hpp): the same column-major
// to row-major reading, the same refusals (non-fp32 data or compute, alpha ≠ 1, beta ≠ 0, scalars on the device,
// strided views, batches, epilogues gemmtune lacks). This adds what running the call needs beyond naming it: the
// operands in the problem's order, and the calls a problem name does not make safe to take over. The math mode is the
// call's own: a call that did not allow TF32 (the handle's default math, compute 32F) stays an fp32 problem, and only
// the runtime's fp32-equivalent entries (RuntimeOptions::fp32_equivalent) may run it as 3xtf32.
//
// Pure functions: the whole table is tested without a GPU (tests/apply/route_test.cpp).
#pragma once

#include <string>

#include "problem/gemm_problem.hpp"
#include "trace/blas_call.hpp"
#include "trace/lt_call.hpp"

namespace gemmtune::apply {

struct ApplyOptions {
  bool fp32_equivalent = false;  // let the runtime's fp32-equivalent entries (3xtf32) run fp32 calls
};

struct Route {
  bool routed = false;
  GemmProblem problem;         // when routed
  bool swap_operands = false;  // gemmtune's A is the call's B and its B the call's A (a column-major call)
  std::string reason;          // why the call passes through, when not routed
  std::string shape;           // what the call is, routed or not (trace's words)
};

// Decided once per distinct call signature: nothing here depends on the operands' addresses.
Route route_blas_call(const BlasCallDesc& call, const ApplyOptions& options);
Route route_lt_call(const LtCallDesc& call, const ApplyOptions& options);

// Why a call with a usable exact entry stays with the library all the same, or "": a cuBLAS call whose entry is
// cuBLAS's own choice ("cublas/sgemm") would run the GEMM the call already runs, with the runtime's overhead on top.
// A cuBLASLt call with that entry is routed: cuBLAS's choice is not cuBLASLt's.
std::string already_the_library(const std::string& api, const std::string& candidate_id);

// One call's device pointers as the library got them: A, B, D (cuBLAS's C), and cuBLASLt's bias and aux pointers.
struct CallOperands {
  const void* a = nullptr;
  const void* b = nullptr;
  void* d = nullptr;
  const void* bias = nullptr;
  void* aux = nullptr;
};

// The runtime's operands of a routed call; false (and `why`) when a pointer the problem needs is null, which the
// library itself would refuse or handle: such a call passes through.
bool routed_operands(const Route& route, const CallOperands& call, GemmOperands& out, std::string& why);

}  // namespace gemmtune::apply
