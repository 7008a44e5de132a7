// The raw record files that `gemmtune trace` reads back from the traced program: written by the CUPTI injection
// library (src/trace/inject) and the cublasLtMatmul shim (src/trace/lt_shim), read by trace/raw_records.cpp.
//
// Each traced process writes into GEMMTUNE_TRACE_DIR:
//   <pid>.cupti.jsonl  one JSON object a line: {"t":"process"} first, then activity records, {"t":"end"} last
//   <pid>.lt.jsonl     one line per distinct cublasLtMatmul call signature, with its call count
// A file without its end line belongs to a process that did not exit normally: its records are kept and the
// trace says so. The libraries are plain C++ with no dependency on gemmtune's core, so they stay small.
#pragma once

#include <cstdint>

namespace gemmtune::trace_raw {

// Set by `gemmtune trace` for the child: where the per-process files go.
inline constexpr const char* kDirEnv = "GEMMTUNE_TRACE_DIR";
inline constexpr const char* kCuptiSuffix = ".cupti.jsonl";
inline constexpr const char* kLtSuffix = ".lt.jsonl";
inline constexpr int kFormatVersion = 1;

// A cublasLtMatmul call's external correlation id: the signature index in the high half, the call's sequence
// number in the low half, so a kernel record names both the GEMM problem and the call that launched it.
inline constexpr unsigned kCallBits = 32;
inline std::uint64_t lt_external_id(std::uint32_t signature, std::uint32_t call) {
  return (static_cast<std::uint64_t>(signature) << kCallBits) | call;
}
inline std::uint32_t lt_signature_of(std::uint64_t external_id) {
  return static_cast<std::uint32_t>(external_id >> kCallBits);
}

// The shim exports this symbol; the injection library, which links CUPTI, finds it with dlsym(RTLD_DEFAULT) and
// hands it CUPTI's push and pop of an external correlation id, so the shim itself needs neither CUPTI nor cuBLASLt
// at link time (linking either could load a second copy beside the program's own).
using PushCorrelationFn = int (*)(std::uint64_t id);
using PopCorrelationFn = int (*)();
inline constexpr const char* kSetHooksSymbol = "gemmtune_trace_set_correlation_hooks";
using SetHooksFn = void (*)(PushCorrelationFn, PopCorrelationFn);

}  // namespace gemmtune::trace_raw
