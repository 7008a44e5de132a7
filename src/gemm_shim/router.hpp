// The router of `gemmtune apply`: the GEMM shim's second user, beside the recorder. Under GEMMTUNE_APPLY=1
// (apply/apply_settings.hpp) an intercepted call whose signature routes (apply/route.hpp) and whose problem has a
// usable exact entry in the db runs through gemmtune's runtime, reached through libgemmtune_apply_backend.so
// (apply/backend/apply_backend.h), loaded from beside this library at the first routable call. Every other call goes
// to the library untouched: a signature the rule refuses, no GPU or no backend, no exact entry, a problem first seen
// during a graph capture (asked again at its next call), a call on another GPU. A call the runtime fails goes to the
// library too, with one warning on stderr per process, and its signature is not routed again.
//
// Decisions are made once per distinct signature and kept in a table, so a routed call costs a lookup under a lock
// and the runtime's own hot path. With GEMMTUNE_APPLY_RECORD=1 the backend writes each miss into the db as it meets it;
// at exit the process writes its report part (GEMMTUNE_APPLY_REPORT_DIR). Nothing here throws or ends the program.
#pragma once

#include "apply/route.hpp"
#include "gemm_shim/recorder.hpp"
#include "trace/lt_call.hpp"

namespace gemmtune::gemm_shim {

// Whether this process runs under `gemmtune apply`; read from the environment once.
bool applying();

// True when the call ran through the runtime: the library must then not be called. handle: the call's
// cublasHandle_t, whose stream the call runs on (null for the legacy API, which never routes).
bool route_blas_call(const BlasSignature& signature, const apply::CallOperands& operands, void* handle);
// The same for cublasLtMatmul, whose stream is an argument.
bool route_lt_call(const LtCallDesc& call, const apply::CallOperands& operands, void* stream);

}  // namespace gemmtune::gemm_shim
