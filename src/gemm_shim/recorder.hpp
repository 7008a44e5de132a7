// What the GEMM shim's interceptors share (libgemmtune_trace_gemms.so: lt_shim.cpp in front of cublasLtMatmul,
// blas_shim.cpp in front of cuBLAS's GEMM entry points; under `gemmtune apply` router.hpp runs routable calls through
// gemmtune's runtime, the same interceptors in front): whether this process is traced, the distinct call
// signatures with their call counts, written to <GEMMTUNE_TRACE_DIR>/<pid>.gemms.jsonl at exit, and the CUPTI
// external correlation id pushed around each call, so every kernel the call launches is tagged with its signature
// in CUPTI's records. Nothing here throws or ends the program; a call the shim cannot describe still runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <tuple>
#include <vector>

namespace gemmtune::gemm_shim {

// A cuBLAS call's signature: every argument that decides its problem (the fields of trace/blas_call.hpp), compared
// and hashed as values on the call path and written as JSON only at exit.
struct BlasSignature {
  const char* api = "";  // the entry point's name
  int transa = 0, transb = 0;
  std::int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  int a_type = 0, b_type = 0, c_type = 0, compute = -1, math_mode = -1, pointer_mode = 0;
  bool has_scalars = false;  // alpha and beta were host values of a type the shim reads
  double alpha = 0, beta = 0;
  std::int64_t batch = 1, stride_a = 0, stride_b = 0, stride_c = 0;

  auto fields() const {
    return std::tie(api, transa, transb, m, n, k, lda, ldb, ldc, a_type, b_type, c_type, compute, math_mode,
                    pointer_mode, has_scalars, alpha, beta, batch, stride_a, stride_b, stride_c);
  }
  bool operator==(const BlasSignature& o) const { return fields() == o.fields(); }
};

// The external correlation id of one call of this signature (its number and the call's); counts the call. 0 when
// the process is not traced.
std::uint64_t record_lt_call(const std::string& desc_json);
std::uint64_t record_blas_call(const BlasSignature& signature);

// The real function `name`: the next definition in link order (RTLD_NEXT), else the one in an already loaded
// library of one of these sonames. RTLD_NEXT sees only the global scope, and Python loads extension modules
// RTLD_LOCAL, so PyTorch's cuBLAS (a dependency of one) is found by its soname: it is loaded, since its caller is
// calling it.
void* real_symbol(const char* name, std::initializer_list<const char*> sonames);

// Around loading gemmtune's own libraries into the program (the apply backend: router.hpp). A library of one of these
// sonames that appears meanwhile came with them, and real_symbol passes it over from then on: a program on cuBLAS 12
// must not have an entry point it first calls later resolved to the backend's cuBLAS 13.
class OwnLibraries {
 public:
  explicit OwnLibraries(std::initializer_list<const char*> sonames);
  ~OwnLibraries();
  OwnLibraries(const OwnLibraries&) = delete;
  OwnLibraries& operator=(const OwnLibraries&) = delete;

 private:
  std::vector<std::string> absent_;  // the sonames not loaded before
};

// Hashes a signature's fields as values: what the recorder and the router (router.hpp) key their tables on.
struct BlasSignatureHash {
  std::size_t operator()(const BlasSignature& s) const;
};

// Whether this process is traced (GEMMTUNE_TRACE_DIR is set): only then are calls counted and written.
bool recording();

// Around one intercepted call. Only the outermost intercepted call on a thread is the program's: one the library
// makes through an exported symbol of its own (or of cuBLASLt) while serving the program's call is part of that call,
// and so is every call gemmtune's runtime makes while running a routed one. Those are neither recorded nor routed.
class CallScope {
 public:
  CallScope();
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;
  bool outermost() const { return outermost_; }

 private:
  bool outermost_;
};

// Pushes a call's external correlation id (record_*_call) around it, so CUPTI tags every kernel it launches, the
// library's or, under `gemmtune apply`, the runtime's. Nothing for id 0 or when the injection library gave no hooks.
class Correlation {
 public:
  explicit Correlation(std::uint64_t id);
  ~Correlation();
  Correlation(const Correlation&) = delete;
  Correlation& operator=(const Correlation&) = delete;

 private:
  bool pushed_ = false;
};

}  // namespace gemmtune::gemm_shim
