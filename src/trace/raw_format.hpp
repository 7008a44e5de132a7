// The raw record files that `gemmtune trace` reads back from the traced program: written by the CUPTI injection
// library (src/trace/inject) and the GEMM shim (src/gemm_shim), read by trace/raw_records.cpp.
//
// Each traced process writes into GEMMTUNE_TRACE_DIR:
//   <pid>.cupti.jsonl  one JSON object a line: {"t":"process"} first, then activity records, {"t":"end"} last
//   <pid>.gemms.jsonl  one line per distinct GEMM call signature, with its call count: {"t":"lt", ..., "desc":{...}}
//                      for a cublasLtMatmul call (trace/lt_call.hpp), {"t":"blas", ..., "call":{...}} for a call
//                      of one of cuBLAS's GEMM entry points (trace/blas_call.hpp)
// A file without its end line belongs to a process that did not exit normally: its records are kept and the
// trace says so. The libraries are plain C++ with no dependency on gemmtune's core, so they stay small.
#pragma once

#include <cstdint>

namespace gemmtune::trace_raw {

// Set by `gemmtune trace` for the child: where the per-process files go.
inline constexpr const char* kDirEnv = "GEMMTUNE_TRACE_DIR";
inline constexpr const char* kCuptiSuffix = ".cupti.jsonl";
inline constexpr const char* kGemmsSuffix = ".gemms.jsonl";
inline constexpr int kFormatVersion = 1;

// A GEMM call's external correlation id: the signature number in the high half, the call's sequence number in
// the low half, so a kernel record names both the GEMM problem and the call that launched it. cuBLAS and cuBLASLt
// calls number their signatures in one sequence.
inline constexpr unsigned kCallBits = 32;
inline std::uint64_t gemm_external_id(std::uint32_t signature, std::uint32_t call) {
  return (static_cast<std::uint64_t>(signature) << kCallBits) | call;
}
inline std::uint32_t gemm_signature_of(std::uint64_t external_id) {
  return static_cast<std::uint32_t>(external_id >> kCallBits);
}

// The shim exports this symbol; the injection library, which links CUPTI, finds it with dlsym(RTLD_DEFAULT) and
// hands it the push and pop of the current GEMM call's external id (its own per-thread stack, which its launch
// callback reads; or CUPTI's external correlation where it has no callbacks), so the shim itself needs neither CUPTI
// nor cuBLAS at link time (linking either could load a second copy beside the program's own).
using PushCorrelationFn = int (*)(std::uint64_t id);
using PopCorrelationFn = int (*)();
inline constexpr const char* kSetHooksSymbol = "gemmtune_trace_set_correlation_hooks";
using SetHooksFn = void (*)(PushCorrelationFn, PopCorrelationFn);

}  // namespace gemmtune::trace_raw
