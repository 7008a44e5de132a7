// What the fake cuBLAS (fake_cublas.cpp) shows its callers beyond cuBLAS's API: the arguments its last GEMM call
// received, so a caller proves the shim in front of it passed every argument on untouched.
#pragma once

#include <cublas_api.h>

struct FakeBlasCall {
  const char* api = "";
  int transa = 0, transb = 0;
  long long m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  int a_type = 0, b_type = 0, c_type = 0, compute = -1, algo = 0;
  const void* alpha = nullptr;
  const void* beta = nullptr;
  const void* a = nullptr;  // the A pointer (strided forms) or the A pointer array (batched forms)
  const void* b = nullptr;
  const void* c = nullptr;
  float alpha_value = 0, beta_value = 0;  // the legacy API's by-value scalars
  long long batch = 1, stride_a = 0, stride_b = 0, stride_c = 0;
};

extern "C" {
const FakeBlasCall* fake_cublas_last_call();
// The status the next GEMM call returns.
void fake_cublas_set_status(cublasStatus_t status);
}
