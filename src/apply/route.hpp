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
  bool host_yield = true;        // yields_when_drained below; off: every call of a routed problem is routed
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

// What a `+pad` entry's launches beside its cuBLASLt call (our padding copy before it and, unless only k was padded
// and the problem has no epilogue, our epilogue kernel after it) add to a call's host time: 22-27 us per call on the
// H200 machine's host against 10-13 for the library's own call (scripts/dev/launch_host_probe.cu).
inline constexpr double kPaddedEntryExtraHostUs = 12;

// Whether a call whose exact entry is candidate_id goes to the library instead wherever its stream has drained when
// the call comes (the backend asks the stream). saving_us: the GPU time per call the entry saved over cuBLASLt's
// heuristic-first in its sweep, negative where not known. A drained stream means the GPU waits for the host, and the
// call's host time and its GPU time both lie on the program's path: the GPU starts it only once the host has issued
// it. So a `+pad` entry yields there only where it saves less GPU time than the host time it adds, or where its
// saving is not known. Yielding every `+pad` entry sent 13-28% of the odd-width tf32 PyTorch step's GEMM flops to
// cuBLAS's unaligned kernels, from entries that save tens of microseconds a call; the step benchmark could not tell
// either rule from routing every call (its processes differ by more: results/nvidia-h200/apply_step.json, H200).
// A call that repeats an earlier one exactly is routed all the same: the runtime replays it as one CUDA graph, 1.2-2.1
// us of host time whatever it launches (Runtime::replays).
// Every other entry is one launch of the library or of ours, or a copy and one of ours (9-11 us), and is always
// routed.
bool yields_when_drained(const std::string& candidate_id, double saving_us, const ApplyOptions& options);

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
