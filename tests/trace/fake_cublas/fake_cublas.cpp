// A stand-in for cuBLAS (built as libcublas.so.13, its symbols versioned as the real one's are) with just what the
// --gemms shim touches: handles that keep their math and pointer mode and their stream, and GEMM entry points that keep the
// arguments they were given and return the status they were told to. cublasSgemmBatched serves each batch entry
// through its own exported cublasSgemm_v2, as a library calling itself through its symbols would, so a test sees
// that the shim records the program's call only.
#include "fake_cublas.hpp"

#include <cublas.h>

namespace {

struct Handle {
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
  cublasPointerMode_t pointer = CUBLAS_POINTER_MODE_HOST;
  cudaStream_t stream = nullptr;
};

// Per thread, so a program calling from several threads (tests/gemm_shim/threaded_caller) races on nothing.
thread_local FakeBlasCall last;
thread_local cublasStatus_t next_status = CUBLAS_STATUS_SUCCESS;

Handle* handle_of(cublasHandle_t h) { return reinterpret_cast<Handle*>(h); }

cublasStatus_t gemm(const char* api, cublasOperation_t transa, cublasOperation_t transb, long long m, long long n,
                    long long k, const void* alpha, const void* a, long long lda, const void* b, long long ldb,
                    const void* beta, const void* c, long long ldc) {
  last = FakeBlasCall{};
  last.api = api;
  last.transa = transa;
  last.transb = transb;
  last.m = m;
  last.n = n;
  last.k = k;
  last.lda = lda;
  last.ldb = ldb;
  last.ldc = ldc;
  last.alpha = alpha;
  last.beta = beta;
  last.a = a;
  last.b = b;
  last.c = c;
  last.a_type = last.b_type = last.c_type = CUDA_R_32F;
  return next_status;
}

cublasStatus_t typed(cudaDataType at, cudaDataType bt, cudaDataType ct, int compute, int algo) {
  last.a_type = at;
  last.b_type = bt;
  last.c_type = ct;
  last.compute = compute;
  last.algo = algo;
  return next_status;
}

cublasStatus_t batched(long long count, long long sa, long long sb, long long sc) {
  last.batch = count;
  last.stride_a = sa;
  last.stride_b = sb;
  last.stride_c = sc;
  return next_status;
}

}  // namespace

extern "C" {

const FakeBlasCall* fake_cublas_last_call() { return &last; }
void fake_cublas_set_status(cublasStatus_t status) { next_status = status; }

cublasStatus_t cublasCreate_v2(cublasHandle_t* h) {
  *h = reinterpret_cast<cublasHandle_t>(new Handle);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t stream) {
  handle_of(h)->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t h, cudaStream_t* stream) {
  *stream = handle_of(h)->stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode) {
  handle_of(h)->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t h, cublasMath_t* mode) {
  *mode = handle_of(h)->math;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t mode) {
  handle_of(h)->pointer = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t* mode) {
  *mode = handle_of(h)->pointer;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const float* alpha, const float* A, int lda, const float* B, int ldb, const float* beta,
                              float* C, int ldc) {
  return gemm("cublasSgemm_v2", ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t cublasSgemm_v2_64(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                                 int64_t k, const float* alpha, const float* A, int64_t lda, const float* B,
                                 int64_t ldb, const float* beta, float* C, int64_t ldc) {
  return gemm("cublasSgemm_v2_64", ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t cublasGemmEx(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void* alpha, const void* A, cudaDataType at, int lda, const void* B, cudaDataType bt,
                            int ldb, const void* beta, void* C, cudaDataType ct, int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t algo) {
  gemm("cublasGemmEx", ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  return typed(at, bt, ct, compute, algo);
}

cublasStatus_t cublasGemmEx_64(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                               int64_t k, const void* alpha, const void* A, cudaDataType at, int64_t lda,
                               const void* B, cudaDataType bt, int64_t ldb, const void* beta, void* C, cudaDataType ct,
                               int64_t ldc, cublasComputeType_t compute, cublasGemmAlgo_t algo) {
  gemm("cublasGemmEx_64", ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  return typed(at, bt, ct, compute, algo);
}

cublasStatus_t cublasSgemmEx(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                             const float* alpha, const void* A, cudaDataType at, int lda, const void* B,
                             cudaDataType bt, int ldb, const float* beta, void* C, cudaDataType ct, int ldc) {
  gemm("cublasSgemmEx", ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  return typed(at, bt, ct, -1, 0);
}

cublasStatus_t cublasSgemmEx_64(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                                int64_t k, const float* alpha, const void* A, cudaDataType at, int64_t lda,
                                const void* B, cudaDataType bt, int64_t ldb, const float* beta, void* C,
                                cudaDataType ct, int64_t ldc) {
  gemm("cublasSgemmEx_64", ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  return typed(at, bt, ct, -1, 0);
}

cublasStatus_t cublasSgemmBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  const float* alpha, const float* const A[], int lda, const float* const B[], int ldb,
                                  const float* beta, float* const C[], int ldc, int count) {
  for (int i = 0; i < count; ++i) cublasSgemm_v2(h, ta, tb, m, n, k, alpha, A[i], lda, B[i], ldb, beta, C[i], ldc);
  gemm("cublasSgemmBatched", ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  return batched(count, 0, 0, 0);
}

cublasStatus_t cublasSgemmBatched_64(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                                     int64_t k, const float* alpha, const float* const A[], int64_t lda,
                                     const float* const B[], int64_t ldb, const float* beta, float* const C[],
                                     int64_t ldc, int64_t count) {
  gemm("cublasSgemmBatched_64", ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  return batched(count, 0, 0, 0);
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                   const void* alpha, const void* const A[], cudaDataType at, int lda,
                                   const void* const B[], cudaDataType bt, int ldb, const void* beta, void* const C[],
                                   cudaDataType ct, int ldc, int count, cublasComputeType_t compute,
                                   cublasGemmAlgo_t algo) {
  gemm("cublasGemmBatchedEx", ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  typed(at, bt, ct, compute, algo);
  return batched(count, 0, 0, 0);
}

cublasStatus_t cublasGemmBatchedEx_64(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                                      int64_t k, const void* alpha, const void* const A[], cudaDataType at,
                                      int64_t lda, const void* const B[], cudaDataType bt, int64_t ldb,
                                      const void* beta, void* const C[], cudaDataType ct, int64_t ldc, int64_t count,
                                      cublasComputeType_t compute, cublasGemmAlgo_t algo) {
  gemm("cublasGemmBatchedEx_64", ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  typed(at, bt, ct, compute, algo);
  return batched(count, 0, 0, 0);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const float* alpha, const float* A, int lda, long long sa,
                                         const float* B, int ldb, long long sb, const float* beta, float* C, int ldc,
                                         long long sc, int count) {
  gemm("cublasSgemmStridedBatched", ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  return batched(count, sa, sb, sc);
}

cublasStatus_t cublasSgemmStridedBatched_64(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                                            int64_t n, int64_t k, const float* alpha, const float* A, int64_t lda,
                                            long long sa, const float* B, int64_t ldb, long long sb, const float* beta,
                                            float* C, int64_t ldc, long long sc, int64_t count) {
  gemm("cublasSgemmStridedBatched_64", ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  return batched(count, sa, sb, sc);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const void* alpha, const void* A, cudaDataType at, int lda,
                                          long long sa, const void* B, cudaDataType bt, int ldb, long long sb,
                                          const void* beta, void* C, cudaDataType ct, int ldc, long long sc, int count,
                                          cublasComputeType_t compute, cublasGemmAlgo_t algo) {
  gemm("cublasGemmStridedBatchedEx", ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  typed(at, bt, ct, compute, algo);
  return batched(count, sa, sb, sc);
}

cublasStatus_t cublasGemmStridedBatchedEx_64(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                                             int64_t n, int64_t k, const void* alpha, const void* A, cudaDataType at,
                                             int64_t lda, long long sa, const void* B, cudaDataType bt, int64_t ldb,
                                             long long sb, const void* beta, void* C, cudaDataType ct, int64_t ldc,
                                             long long sc, int64_t count, cublasComputeType_t compute,
                                             cublasGemmAlgo_t algo) {
  gemm("cublasGemmStridedBatchedEx_64", ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  typed(at, bt, ct, compute, algo);
  return batched(count, sa, sb, sc);
}

void cublasSgemm(char ta, char tb, int m, int n, int k, float alpha, const float* A, int lda, const float* B, int ldb,
                 float beta, float* C, int ldc) {
  gemm("cublasSgemm", static_cast<cublasOperation_t>(ta), static_cast<cublasOperation_t>(tb), m, n, k, nullptr, A,
       lda, B, ldb, nullptr, C, ldc);
  last.alpha_value = alpha;
  last.beta_value = beta;
}

}  // extern "C"
