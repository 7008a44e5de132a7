#include "apply/route.hpp"

#include <cublasLt.h>

namespace gemmtune::apply {
namespace {

Route pass_through(const GemmCallProblem& p, const std::string& why) {
  Route r;
  r.reason = why;
  r.shape = p.shape;
  return r;
}

// The call's problem, routed, unless the options keep its compute type from gemmtune. A 32F_PEDANTIC call asked
// for fp32 without reduced-precision shortcuts; the fp32-equivalent policy's 3xtf32 is one, so such calls are left
// to the library when that policy is on (the runtime takes the policy for every fp32 problem alike).
Route routed(const GemmCallProblem& p, int compute, const ApplyOptions& options) {
  if (!p.tunable) return pass_through(p, p.reason);
  if (compute == CUBLAS_COMPUTE_32F_PEDANTIC && options.fp32_equivalent)
    return pass_through(p, "compute type 32F_PEDANTIC: --fp32-equivalent's 3xtf32 is not offered to a pedantic call");
  Route r;
  r.routed = true;
  r.problem = p.problem;
  r.shape = p.shape;
  return r;
}

bool is_legacy(const std::string& api) { return api == "cublasSgemm"; }

// cublasSgemmBatched and cublasGemmBatchedEx (and _64): their operands are arrays of pointers in device memory.
bool is_pointer_array_batch(const std::string& api) {
  return api.find("Batched") != std::string::npos && api.find("StridedBatched") == std::string::npos;
}

}  // namespace

Route route_blas_call(const BlasCallDesc& call, const ApplyOptions& options) {
  const GemmCallProblem p = blas_call_problem(call);
  // The legacy API has no handle: its stream is cublasSetKernelStream's, which cuBLAS does not let a caller read.
  if (is_legacy(call.api)) return pass_through(p, "the legacy cuBLAS API (no handle, so the call's stream is unknown)");
  if (is_pointer_array_batch(call.api))
    return pass_through(p, "a pointer-array batched call (its operand addresses are in device memory)");
  Route r = routed(p, blas_effective_compute(call).value_or(-1), options);
  // cuBLAS's C (m×n, column-major) is the row-major Y = Cᵀ = op(B)ᵀ·op(A)ᵀ: gemmtune's A is the call's B.
  r.swap_operands = true;
  return r;
}

Route route_lt_call(const LtCallDesc& call, const ApplyOptions& options) {
  Route r = routed(lt_call_problem(call), call.compute, options);
  if (!r.routed) return r;
  // As lt_call_problem reads it: a column-order D, or a row-order D with a bias (stored transposed), is Y = Dᵀ, whose
  // A is the call's op(B)ᵀ; a row-order D without one is Y itself.
  r.swap_operands = call.d->order != CUBLASLT_ORDER_ROW || r.problem.epi.bias;
  return r;
}

std::string already_the_library(const std::string& api, const std::string& candidate_id) {
  if (api == "cublasLtMatmul" || candidate_id.rfind("cublas/", 0) != 0) return "";
  return "the db's entry is cuBLAS's own choice (" + candidate_id + "), which the call already makes";
}

bool yields_when_drained(const std::string& candidate_id, double saving_us, const ApplyOptions& options) {
  const bool unknown = saving_us < 0;
  return options.host_yield && candidate_id.find("+pad") != std::string::npos &&
         (unknown || saving_us < kPaddedEntryExtraHostUs);
}

bool routed_operands(const Route& route, const CallOperands& call, GemmOperands& out, std::string& why) {
  const void* a = route.swap_operands ? call.b : call.a;
  const void* b = route.swap_operands ? call.a : call.b;
  if (!a || !b || !call.d) {
    why = "a null operand pointer";
    return false;
  }
  if (route.problem.epi.bias && !call.bias) {
    why = "a bias epilogue with a null bias pointer";
    return false;
  }
  if (route.problem.epi.save_z && !call.aux) {
    why = "an aux epilogue with a null aux pointer";
    return false;
  }
  out = GemmOperands{};
  out.A = static_cast<const float*>(a);
  out.B = static_cast<const float*>(b);
  out.Y = static_cast<float*>(call.d);
  out.bias = route.problem.epi.bias ? static_cast<const float*>(call.bias) : nullptr;
  out.Z = route.problem.epi.save_z ? static_cast<float*>(call.aux) : nullptr;
  return true;
}

}  // namespace gemmtune::apply
