// The part of a program that calls cuBLAS, built as a module the caller loads RTLD_LOCAL, as Python loads PyTorch:
// its cuBLAS (the fake, linked here) is then outside the global scope the shim's RTLD_NEXT searches.
//
// run_blas_calls makes one GEMM call per spec, each through the entry point it names, after setting the handle's
// math and pointer mode, and checks that the fake received exactly the arguments given and that the status the fake
// returned came back. A spec is 21 numbers after the entry point's name:
//   api transa transb m n k lda ldb ldc a_type b_type c_type compute math_mode pointer_mode alpha beta
//   batch stride_a stride_b stride_c
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "fake_cublas.hpp"

#include <cublas.h>

namespace {

struct Spec {
  std::string api;
  int transa = 0, transb = 0;
  long long m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  int a_type = 0, b_type = 0, c_type = 0, compute = -1, math_mode = 0, pointer_mode = 0;
  double alpha = 0, beta = 0;
  long long batch = 1, stride_a = 0, stride_b = 0, stride_c = 0;
};

bool parse(const std::string& text, Spec& s) {
  std::istringstream in(text);
  in >> s.api >> s.transa >> s.transb >> s.m >> s.n >> s.k >> s.lda >> s.ldb >> s.ldc >> s.a_type >> s.b_type >>
      s.c_type >> s.compute >> s.math_mode >> s.pointer_mode >> s.alpha >> s.beta >> s.batch >> s.stride_a >>
      s.stride_b >> s.stride_c;
  return static_cast<bool>(in);
}

char op_char(int op) { return op == CUBLAS_OP_T ? 'T' : op == CUBLAS_OP_C ? 'C' : 'N'; }

// What the module hands cuBLAS besides the sizes: distinct addresses it can recognise on the other side.
struct Operands {
  float alpha_f = 0, beta_f = 0;
  double alpha_d = 0, beta_d = 0;
  const void* alpha = nullptr;
  const void* beta = nullptr;
  std::vector<const float*> a_array, b_array;
  std::vector<float*> c_array;
  const float* a = reinterpret_cast<const float*>(0x1000);
  const float* b = reinterpret_cast<const float*>(0x2000);
  float* c = reinterpret_cast<float*>(0x3000);
};

cublasStatus_t call(cublasHandle_t h, const Spec& s, Operands& o) {
  const auto ta = static_cast<cublasOperation_t>(s.transa), tb = static_cast<cublasOperation_t>(s.transb);
  const auto at = static_cast<cudaDataType>(s.a_type), bt = static_cast<cudaDataType>(s.b_type),
             ct = static_cast<cudaDataType>(s.c_type);
  const auto compute = static_cast<cublasComputeType_t>(s.compute);
  const auto algo = CUBLAS_GEMM_DEFAULT;
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  const int lda = static_cast<int>(s.lda), ldb = static_cast<int>(s.ldb), ldc = static_cast<int>(s.ldc);
  const int count = static_cast<int>(s.batch);
  const auto* fa = static_cast<const float*>(o.alpha);
  const auto* fb = static_cast<const float*>(o.beta);
  const auto* const* aa = o.a_array.data();
  const auto* const* ba = o.b_array.data();
  auto* const* ca = o.c_array.data();
  const auto* const* va = reinterpret_cast<const void* const*>(aa);
  const auto* const* vb = reinterpret_cast<const void* const*>(ba);
  auto* const* vc = reinterpret_cast<void* const*>(ca);
  if (s.api == "cublasSgemm_v2") return cublasSgemm_v2(h, ta, tb, m, n, k, fa, o.a, lda, o.b, ldb, fb, o.c, ldc);
  if (s.api == "cublasSgemm_v2_64")
    return cublasSgemm_v2_64(h, ta, tb, s.m, s.n, s.k, fa, o.a, s.lda, o.b, s.ldb, fb, o.c, s.ldc);
  if (s.api == "cublasGemmEx")
    return cublasGemmEx(h, ta, tb, m, n, k, o.alpha, o.a, at, lda, o.b, bt, ldb, o.beta, o.c, ct, ldc, compute, algo);
  if (s.api == "cublasGemmEx_64")
    return cublasGemmEx_64(h, ta, tb, s.m, s.n, s.k, o.alpha, o.a, at, s.lda, o.b, bt, s.ldb, o.beta, o.c, ct, s.ldc,
                           compute, algo);
  if (s.api == "cublasSgemmEx")
    return cublasSgemmEx(h, ta, tb, m, n, k, fa, o.a, at, lda, o.b, bt, ldb, fb, o.c, ct, ldc);
  if (s.api == "cublasSgemmEx_64")
    return cublasSgemmEx_64(h, ta, tb, s.m, s.n, s.k, fa, o.a, at, s.lda, o.b, bt, s.ldb, fb, o.c, ct, s.ldc);
  if (s.api == "cublasSgemmBatched")
    return cublasSgemmBatched(h, ta, tb, m, n, k, fa, aa, lda, ba, ldb, fb, ca, ldc, count);
  if (s.api == "cublasSgemmBatched_64")
    return cublasSgemmBatched_64(h, ta, tb, s.m, s.n, s.k, fa, aa, s.lda, ba, s.ldb, fb, ca, s.ldc, s.batch);
  if (s.api == "cublasGemmBatchedEx")
    return cublasGemmBatchedEx(h, ta, tb, m, n, k, o.alpha, va, at, lda, vb, bt, ldb, o.beta, vc, ct, ldc, count,
                               compute, algo);
  if (s.api == "cublasGemmBatchedEx_64")
    return cublasGemmBatchedEx_64(h, ta, tb, s.m, s.n, s.k, o.alpha, va, at, s.lda, vb, bt, s.ldb, o.beta, vc, ct,
                                  s.ldc, s.batch, compute, algo);
  if (s.api == "cublasSgemmStridedBatched")
    return cublasSgemmStridedBatched(h, ta, tb, m, n, k, fa, o.a, lda, s.stride_a, o.b, ldb, s.stride_b, fb, o.c, ldc,
                                     s.stride_c, count);
  if (s.api == "cublasSgemmStridedBatched_64")
    return cublasSgemmStridedBatched_64(h, ta, tb, s.m, s.n, s.k, fa, o.a, s.lda, s.stride_a, o.b, s.ldb, s.stride_b,
                                        fb, o.c, s.ldc, s.stride_c, s.batch);
  if (s.api == "cublasGemmStridedBatchedEx")
    return cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, o.alpha, o.a, at, lda, s.stride_a, o.b, bt, ldb, s.stride_b,
                                      o.beta, o.c, ct, ldc, s.stride_c, count, compute, algo);
  if (s.api == "cublasGemmStridedBatchedEx_64")
    return cublasGemmStridedBatchedEx_64(h, ta, tb, s.m, s.n, s.k, o.alpha, o.a, at, s.lda, s.stride_a, o.b, bt,
                                         s.ldb, s.stride_b, o.beta, o.c, ct, s.ldc, s.stride_c, s.batch, compute, algo);
  if (s.api == "cublasSgemm") {
    cublasSgemm(op_char(s.transa), op_char(s.transb), m, n, k, o.alpha_f, o.a, lda, o.b, ldb, o.beta_f, o.c, ldc);
    return fake_cublas_last_call()->api == s.api ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
  }
  std::fprintf(stderr, "fake_blas_module: unknown entry point %s\n", s.api.c_str());
  return CUBLAS_STATUS_NOT_SUPPORTED;
}

// The differences between what the fake received and what was passed; empty when none.
std::string differences(const Spec& s, const Operands& o, bool batched_arrays) {
  const FakeBlasCall& r = *fake_cublas_last_call();
  std::string d;
  const auto check = [&d](bool same, const char* what) {
    if (!same) d += std::string(" ") + what;
  };
  const bool legacy = s.api == "cublasSgemm";
  check(r.api == s.api, "api");
  check(legacy ? r.transa == op_char(s.transa) && r.transb == op_char(s.transb)
               : r.transa == s.transa && r.transb == s.transb,
        "ops");
  check(r.m == s.m && r.n == s.n && r.k == s.k, "sizes");
  check(r.lda == s.lda && r.ldb == s.ldb && r.ldc == s.ldc, "leading dimensions");
  check(r.a_type == s.a_type && r.b_type == s.b_type && r.c_type == s.c_type, "types");
  check(r.compute == s.compute, "compute type");
  check(r.batch == s.batch && r.stride_a == s.stride_a && r.stride_b == s.stride_b && r.stride_c == s.stride_c,
        "batch");
  if (legacy) {
    check(r.alpha_value == o.alpha_f && r.beta_value == o.beta_f, "scalars");
  } else {
    check(r.alpha == o.alpha && r.beta == o.beta, "scalar pointers");
  }
  const void* a = batched_arrays ? static_cast<const void*>(o.a_array.data()) : o.a;
  const void* b = batched_arrays ? static_cast<const void*>(o.b_array.data()) : o.b;
  const void* c = batched_arrays ? static_cast<const void*>(o.c_array.data()) : o.c;
  check(r.a == a && r.b == b && r.c == c, "operand pointers");
  return d;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int run_blas_calls(int count, char** specs) {
  cublasHandle_t h = nullptr;
  cublasCreate_v2(&h);
  cublasSetStream_v2(h, reinterpret_cast<cudaStream_t>(0x5000));  // an address the apply router must pass on
  const cublasStatus_t statuses[] = {CUBLAS_STATUS_SUCCESS, CUBLAS_STATUS_INVALID_VALUE, CUBLAS_STATUS_NOT_SUPPORTED};
  int changed = 0;
  for (int i = 0; i < count; ++i) {
    Spec s;
    if (!parse(specs[i], s)) {
      std::fprintf(stderr, "fake_blas_module: bad spec '%s'\n", specs[i]);
      return -1;
    }
    cublasSetMathMode(h, static_cast<cublasMath_t>(s.math_mode));
    cublasSetPointerMode_v2(h, static_cast<cublasPointerMode_t>(s.pointer_mode));
    Operands o;
    o.alpha_f = static_cast<float>(s.alpha);
    o.beta_f = static_cast<float>(s.beta);
    o.alpha_d = s.alpha;
    o.beta_d = s.beta;
    const bool doubles = s.compute == CUBLAS_COMPUTE_64F || s.compute == CUBLAS_COMPUTE_64F_PEDANTIC;
    o.alpha = doubles ? static_cast<const void*>(&o.alpha_d) : &o.alpha_f;
    o.beta = doubles ? static_cast<const void*>(&o.beta_d) : &o.beta_f;
    for (std::uintptr_t b = 0; b < static_cast<std::uintptr_t>(s.batch); ++b) {
      o.a_array.push_back(reinterpret_cast<const float*>(0x1100 + 16 * b));
      o.b_array.push_back(reinterpret_cast<const float*>(0x2100 + 16 * b));
      o.c_array.push_back(reinterpret_cast<float*>(0x3100 + 16 * b));
    }
    const cublasStatus_t expected = s.api == "cublasSgemm" ? CUBLAS_STATUS_SUCCESS : statuses[i % 3];
    fake_cublas_set_status(expected);
    const cublasStatus_t got = call(h, s, o);
    const bool batched_arrays = s.api.find("Batched") != std::string::npos &&
                                s.api.find("Strided") == std::string::npos;
    std::string d = differences(s, o, batched_arrays);
    if (got != expected) d += " status";
    if (!d.empty()) {
      std::printf("call %d (%s) reached cuBLAS changed:%s\n", i, s.api.c_str(), d.c_str());
      ++changed;
    }
  }
  return changed;
}
