// The GEMM shim's interceptors of cuBLAS's GEMM entry points (libgemmtune_trace_gemms.so;
// gemm_shim/recorder.hpp): the routes PyTorch and CuPy send fp32/tf32 GEMMs through (cublasSgemm_v2,
// cublasGemmEx, cublasSgemmEx, their batched and strided-batched forms, each with its 64-bit-size _64 variant of
// CUDA 12+) and the legacy cublasSgemm. Each call's arguments that decide its problem, with the handle's math and
// pointer mode at the call, become a signature (trace/blas_call.hpp maps it to a problem), recorded when traced and
// handed to the router under `gemmtune apply` (router.hpp) with the call's A, B and C. A call the router does not run
// goes to the real function with its arguments untouched; that is found at run time (the next definition in link
// order), never linked.
//
// Not intercepted: the grouped-batched forms (cublasSgemmGroupedBatched, cublasGemmGroupedBatchedEx: a call of many
// shapes), and the complex, double and half routines (no fp32 problem in them).
#include <cublas.h>

#include <cstdint>
#include <cstring>

#include "gemm_shim/recorder.hpp"
#include "gemm_shim/router.hpp"

#define GEMM_SHIM_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using gemmtune::gemm_shim::BlasSignature;
using gemmtune::apply::CallOperands;
using gemmtune::gemm_shim::CallScope;
using gemmtune::gemm_shim::Correlation;

void* next_cublas(const char* name) {
  return gemmtune::gemm_shim::real_symbol(name, {"libcublas.so.13", "libcublas.so.12", "libcublas.so"});
}

// Calls the real function with the caller's arguments as they came: its type is the intercepting function's own.
template <typename... Args>
cublasStatus_t forward(void* next, Args... args) {
  return reinterpret_cast<cublasStatus_t (*)(Args...)>(next)(args...);
}

struct Sizes {
  std::int64_t m, n, k, lda, ldb, ldc;
};

// Data types and compute type: an S routine's are fp32 and none (the routine's own, 32F).
struct Types {
  int a, b, c, compute;
};
constexpr Types kSingle{CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, -1};

struct Batch {
  std::int64_t count = 1, stride_a = 0, stride_b = 0, stride_c = 0;
};

// The type alpha and beta point to: float for the S routines and the 32F compute types, double for 64F.
enum class ScalarType { Float, Double, Other };

ScalarType scalar_type(int compute) {
  switch (compute) {
    case -1:
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32:
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
      return ScalarType::Float;
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC:
    case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
      return ScalarType::Double;
    default:
      return ScalarType::Other;
  }
}

double read_scalar(const void* p, ScalarType type) {
  if (type == ScalarType::Double) {
    double v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  }
  float v;
  std::memcpy(&v, p, sizeof(v));
  return static_cast<double>(v);
}

int op_of(char op) {
  switch (op) {
    case 'N': case 'n': return CUBLAS_OP_N;
    case 'T': case 't': return CUBLAS_OP_T;
    case 'C': case 'c': return CUBLAS_OP_C;
    default: return -1;
  }
}

BlasSignature signature(const char* api, int transa, int transb, const Sizes& s, const Types& t, const Batch& b) {
  BlasSignature sig;
  sig.api = api;
  sig.transa = transa;
  sig.transb = transb;
  sig.m = s.m;
  sig.n = s.n;
  sig.k = s.k;
  sig.lda = s.lda;
  sig.ldb = s.ldb;
  sig.ldc = s.ldc;
  sig.a_type = t.a;
  sig.b_type = t.b;
  sig.c_type = t.c;
  sig.compute = t.compute;
  sig.batch = b.count;
  sig.stride_a = b.stride_a;
  sig.stride_b = b.stride_b;
  sig.stride_c = b.stride_c;
  return sig;
}

// A call through a handle's signature: its math and pointer mode as they are at the call, alpha and beta where the
// host holds them.
BlasSignature describe(const char* api, cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                       const Sizes& s, const Types& t, const void* alpha, const void* beta, const Batch& b = {}) {
  using GetMathFn = cublasStatus_t (*)(cublasHandle_t, cublasMath_t*);
  using GetPointerFn = cublasStatus_t (*)(cublasHandle_t, cublasPointerMode_t*);
  static const auto get_math = reinterpret_cast<GetMathFn>(next_cublas("cublasGetMathMode"));
  static const auto get_pointer = reinterpret_cast<GetPointerFn>(next_cublas("cublasGetPointerMode_v2"));
  BlasSignature sig = signature(api, transa, transb, s, t, b);
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
  sig.math_mode = get_math && get_math(handle, &math) == CUBLAS_STATUS_SUCCESS ? static_cast<int>(math) : -1;
  cublasPointerMode_t pointer = CUBLAS_POINTER_MODE_HOST;
  const bool pointer_known = get_pointer && get_pointer(handle, &pointer) == CUBLAS_STATUS_SUCCESS;
  sig.pointer_mode = pointer_known ? static_cast<int>(pointer) : -1;
  const ScalarType type = scalar_type(t.compute);
  if (pointer_known && pointer == CUBLAS_POINTER_MODE_HOST && alpha && beta && type != ScalarType::Other) {
    sig.has_scalars = true;
    sig.alpha = read_scalar(alpha, type);
    sig.beta = read_scalar(beta, type);
  }
  return sig;
}

// One call: recorded when the process is traced, run through gemmtune's runtime when it routes under `gemmtune apply`
// (router.hpp), else handed to cuBLAS as it came. describe() asks the handle for its modes, so it runs only for an
// outermost call that one of the two will look at.
template <typename Describe, typename Real>
cublasStatus_t intercept(cublasHandle_t handle, Describe&& describe, const CallOperands& operands, Real&& real) {
  namespace shim = gemmtune::gemm_shim;
  const CallScope scope;
  if (!scope.outermost() || !(shim::recording() || shim::applying())) return real();
  const BlasSignature sig = describe();
  const Correlation correlation(shim::record_blas_call(sig));
  if (shim::applying() && shim::route_blas_call(sig, operands, handle)) return CUBLAS_STATUS_SUCCESS;
  return real();
}

// Each entry point below has a twin of 64-bit sizes (_64, CUDA 12+), and a program may call either: both are exported,
// with one body, the size type its parameter. A body runs the entry point's own real function (`next`) with the
// arguments as they came.

template <typename Int>
cublasStatus_t sgemm(const char* api, void* next, cublasHandle_t handle, cublasOperation_t transa,
                     cublasOperation_t transb, Int m, Int n, Int k, const float* alpha, const float* A, Int lda,
                     const float* B, Int ldb, const float* beta, float* C, Int ldc) {
  if (!next) return CUBLAS_STATUS_NOT_INITIALIZED;
  return intercept(
      handle,
      [&] {
        return describe(api, handle, transa, transb, {m, n, k, lda, ldb, ldc}, kSingle, alpha, beta);
      },
      {A, B, C}, [&] { return forward(next, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc); });
}

template <typename Int>
cublasStatus_t gemm_ex(const char* api, void* next, cublasHandle_t handle, cublasOperation_t transa,
                       cublasOperation_t transb, Int m, Int n, Int k, const void* alpha, const void* A,
                       cudaDataType Atype, Int lda, const void* B, cudaDataType Btype, Int ldb, const void* beta,
                       void* C, cudaDataType Ctype, Int ldc, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  if (!next) return CUBLAS_STATUS_NOT_INITIALIZED;
  return intercept(
      handle,
      [&] {
        return describe(api, handle, transa, transb, {m, n, k, lda, ldb, ldc}, {Atype, Btype, Ctype, computeType},
                        alpha, beta);
      },
      {A, B, C},
      [&] {
        return forward(next, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
                       computeType, algo);
      });
}

template <typename Int>
cublasStatus_t sgemm_ex(const char* api, void* next, cublasHandle_t handle, cublasOperation_t transa,
                        cublasOperation_t transb, Int m, Int n, Int k, const float* alpha, const void* A,
                        cudaDataType Atype, Int lda, const void* B, cudaDataType Btype, Int ldb, const float* beta,
                        void* C, cudaDataType Ctype, Int ldc) {
  if (!next) return CUBLAS_STATUS_NOT_INITIALIZED;
  return intercept(
      handle,
      [&] {
        return describe(api, handle, transa, transb, {m, n, k, lda, ldb, ldc}, {Atype, Btype, Ctype, -1}, alpha, beta);
      },
      {A, B, C},
      [&] {
        return forward(next, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc);
      });
}

template <typename Int>
cublasStatus_t sgemm_batched(const char* api, void* next, cublasHandle_t handle, cublasOperation_t transa,
                             cublasOperation_t transb, Int m, Int n, Int k, const float* alpha,
                             const float* const Aarray[], Int lda, const float* const Barray[], Int ldb,
                             const float* beta, float* const Carray[], Int ldc, Int batchCount) {
  if (!next) return CUBLAS_STATUS_NOT_INITIALIZED;
  return intercept(
      handle,
      [&] {
        return describe(api, handle, transa, transb, {m, n, k, lda, ldb, ldc}, kSingle, alpha, beta,
                        {batchCount, 0, 0, 0});
      },
      {},
      [&] {
        return forward(next, handle, transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta, Carray, ldc,
                       batchCount);
      });
}

template <typename Int>
cublasStatus_t gemm_batched_ex(const char* api, void* next, cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, Int m, Int n, Int k, const void* alpha,
                               const void* const Aarray[], cudaDataType Atype, Int lda, const void* const Barray[],
                               cudaDataType Btype, Int ldb, const void* beta, void* const Carray[],
                               cudaDataType Ctype, Int ldc, Int batchCount, cublasComputeType_t computeType,
                               cublasGemmAlgo_t algo) {
  if (!next) return CUBLAS_STATUS_NOT_INITIALIZED;
  return intercept(
      handle,
      [&] {
        return describe(api, handle, transa, transb, {m, n, k, lda, ldb, ldc}, {Atype, Btype, Ctype, computeType},
                        alpha, beta, {batchCount, 0, 0, 0});
      },
      {},
      [&] {
        return forward(next, handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb, beta,
                       Carray, Ctype, ldc, batchCount, computeType, algo);
      });
}

template <typename Int>
cublasStatus_t sgemm_strided_batched(const char* api, void* next, cublasHandle_t handle, cublasOperation_t transa,
                                     cublasOperation_t transb, Int m, Int n, Int k, const float* alpha,
                                     const float* A, Int lda, long long int strideA, const float* B, Int ldb,
                                     long long int strideB, const float* beta, float* C, Int ldc,
                                     long long int strideC, Int batchCount) {
  if (!next) return CUBLAS_STATUS_NOT_INITIALIZED;
  return intercept(
      handle,
      [&] {
        return describe(api, handle, transa, transb, {m, n, k, lda, ldb, ldc}, kSingle, alpha, beta,
                        {batchCount, strideA, strideB, strideC});
      },
      {A, B, C},
      [&] {
        return forward(next, handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc,
                       strideC, batchCount);
      });
}

template <typename Int>
cublasStatus_t gemm_strided_batched_ex(const char* api, void* next, cublasHandle_t handle, cublasOperation_t transa,
                                       cublasOperation_t transb, Int m, Int n, Int k, const void* alpha,
                                       const void* A, cudaDataType Atype, Int lda, long long int strideA,
                                       const void* B, cudaDataType Btype, Int ldb, long long int strideB,
                                       const void* beta, void* C, cudaDataType Ctype, Int ldc,
                                       long long int strideC, Int batchCount, cublasComputeType_t computeType,
                                       cublasGemmAlgo_t algo) {
  if (!next) return CUBLAS_STATUS_NOT_INITIALIZED;
  return intercept(
      handle,
      [&] {
        return describe(api, handle, transa, transb, {m, n, k, lda, ldb, ldc}, {Atype, Btype, Ctype, computeType},
                        alpha, beta, {batchCount, strideA, strideB, strideC});
      },
      {A, B, C},
      [&] {
        return forward(next, handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB,
                       beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
      });
}

}  // namespace

GEMM_SHIM_EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                               cublasOperation_t transb, int m, int n, int k, const float* alpha,
                                               const float* A, int lda, const float* B, int ldb, const float* beta,
                                               float* C, int ldc) {
  static constexpr char api[] = "cublasSgemm_v2";
  static void* const next = next_cublas(api);
  return sgemm(api, next, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

GEMM_SHIM_EXPORT cublasStatus_t cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                                  cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                  const float* alpha, const float* A, int64_t lda, const float* B,
                                                  int64_t ldb, const float* beta, float* C, int64_t ldc) {
  static constexpr char api[] = "cublasSgemm_v2_64";
  static void* const next = next_cublas(api);
  return sgemm(api, next, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

GEMM_SHIM_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                             int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                                             int lda, const void* B, cudaDataType Btype, int ldb, const void* beta,
                                             void* C, cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                             cublasGemmAlgo_t algo) {
  static constexpr char api[] = "cublasGemmEx";
  static void* const next = next_cublas(api);
  return gemm_ex(api, next, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
                 computeType, algo);
}

GEMM_SHIM_EXPORT cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                                cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                const void* alpha, const void* A, cudaDataType Atype, int64_t lda,
                                                const void* B, cudaDataType Btype, int64_t ldb, const void* beta,
                                                void* C, cudaDataType Ctype, int64_t ldc,
                                                cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  static constexpr char api[] = "cublasGemmEx_64";
  static void* const next = next_cublas(api);
  return gemm_ex(api, next, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
                 computeType, algo);
}

GEMM_SHIM_EXPORT cublasStatus_t cublasSgemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                              int m, int n, int k, const float* alpha, const void* A,
                                              cudaDataType Atype, int lda, const void* B, cudaDataType Btype, int ldb,
                                              const float* beta, void* C, cudaDataType Ctype, int ldc) {
  static constexpr char api[] = "cublasSgemmEx";
  static void* const next = next_cublas(api);
  return sgemm_ex(api, next, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc);
}

GEMM_SHIM_EXPORT cublasStatus_t cublasSgemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                                 cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                 const float* alpha, const void* A, cudaDataType Atype, int64_t lda,
                                                 const void* B, cudaDataType Btype, int64_t ldb, const float* beta,
                                                 void* C, cudaDataType Ctype, int64_t ldc) {
  static constexpr char api[] = "cublasSgemmEx_64";
  static void* const next = next_cublas(api);
  return sgemm_ex(api, next, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc);
}

GEMM_SHIM_EXPORT cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                   cublasOperation_t transb, int m, int n, int k, const float* alpha,
                                                   const float* const Aarray[], int lda, const float* const Barray[],
                                                   int ldb, const float* beta, float* const Carray[], int ldc,
                                                   int batchCount) {
  static constexpr char api[] = "cublasSgemmBatched";
  static void* const next = next_cublas(api);
  return sgemm_batched(api, next, handle, transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta, Carray, ldc,
                       batchCount);
}

GEMM_SHIM_EXPORT cublasStatus_t cublasSgemmBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                                      cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                      const float* alpha, const float* const Aarray[], int64_t lda,
                                                      const float* const Barray[], int64_t ldb, const float* beta,
                                                      float* const Carray[], int64_t ldc, int64_t batchCount) {
  static constexpr char api[] = "cublasSgemmBatched_64";
  static void* const next = next_cublas(api);
  return sgemm_batched(api, next, handle, transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta, Carray, ldc,
                       batchCount);
}

GEMM_SHIM_EXPORT cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                                    cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                                    const void* const Aarray[], cudaDataType Atype, int lda,
                                                    const void* const Barray[], cudaDataType Btype, int ldb,
                                                    const void* beta, void* const Carray[], cudaDataType Ctype, int ldc,
                                                    int batchCount, cublasComputeType_t computeType,
                                                    cublasGemmAlgo_t algo) {
  static constexpr char api[] = "cublasGemmBatchedEx";
  static void* const next = next_cublas(api);
  return gemm_batched_ex(api, next, handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb,
                         beta, Carray, Ctype, ldc, batchCount, computeType, algo);
}

GEMM_SHIM_EXPORT cublasStatus_t cublasGemmBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
    const void* alpha, const void* const Aarray[], cudaDataType Atype, int64_t lda, const void* const Barray[],
    cudaDataType Btype, int64_t ldb, const void* beta, void* const Carray[], cudaDataType Ctype, int64_t ldc,
    int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  static constexpr char api[] = "cublasGemmBatchedEx_64";
  static void* const next = next_cublas(api);
  return gemm_batched_ex(api, next, handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb,
                         beta, Carray, Ctype, ldc, batchCount, computeType, algo);
}

GEMM_SHIM_EXPORT cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                          cublasOperation_t transb, int m, int n, int k,
                                                          const float* alpha, const float* A, int lda,
                                                          long long int strideA, const float* B, int ldb,
                                                          long long int strideB, const float* beta, float* C, int ldc,
                                                          long long int strideC, int batchCount) {
  static constexpr char api[] = "cublasSgemmStridedBatched";
  static void* const next = next_cublas(api);
  return sgemm_strided_batched(api, next, handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB,
                               beta, C, ldc, strideC, batchCount);
}

GEMM_SHIM_EXPORT cublasStatus_t cublasSgemmStridedBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                                             cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                             const float* alpha, const float* A, int64_t lda,
                                                             long long int strideA, const float* B, int64_t ldb,
                                                             long long int strideB, const float* beta, float* C,
                                                             int64_t ldc, long long int strideC, int64_t batchCount) {
  static constexpr char api[] = "cublasSgemmStridedBatched_64";
  static void* const next = next_cublas(api);
  return sgemm_strided_batched(api, next, handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB,
                               beta, C, ldc, strideC, batchCount);
}

GEMM_SHIM_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const void* alpha,
    const void* A, cudaDataType Atype, int lda, long long int strideA, const void* B, cudaDataType Btype, int ldb,
    long long int strideB, const void* beta, void* C, cudaDataType Ctype, int ldc, long long int strideC,
    int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  static constexpr char api[] = "cublasGemmStridedBatchedEx";
  static void* const next = next_cublas(api);
  return gemm_strided_batched_ex(api, next, handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype,
                                 ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
}

GEMM_SHIM_EXPORT cublasStatus_t cublasGemmStridedBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
    const void* alpha, const void* A, cudaDataType Atype, int64_t lda, long long int strideA, const void* B,
    cudaDataType Btype, int64_t ldb, long long int strideB, const void* beta, void* C, cudaDataType Ctype, int64_t ldc,
    long long int strideC, int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  static constexpr char api[] = "cublasGemmStridedBatchedEx_64";
  static void* const next = next_cublas(api);
  return gemm_strided_batched_ex(api, next, handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype,
                                 ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
}

// The legacy API (cublas.h): no handle, so the default math mode; alpha and beta by value.
GEMM_SHIM_EXPORT void cublasSgemm(char transa, char transb, int m, int n, int k, float alpha, const float* A, int lda,
                                  const float* B, int ldb, float beta, float* C, int ldc) {
  static constexpr char api[] = "cublasSgemm";
  static void* const next = next_cublas(api);
  if (!next) return;
  const auto describe_legacy = [&] {
    BlasSignature sig = signature(api, op_of(transa), op_of(transb), {m, n, k, lda, ldb, ldc}, kSingle, {});
    sig.pointer_mode = CUBLAS_POINTER_MODE_HOST;
    sig.has_scalars = true;
    sig.alpha = static_cast<double>(alpha);
    sig.beta = static_cast<double>(beta);
    return sig;
  };
  // The router passes every legacy call through (its stream is unknown); under `gemmtune apply` it reports why.
  intercept(nullptr, describe_legacy, {A, B, C}, [&] {
    reinterpret_cast<void (*)(char, char, int, int, int, float, const float*, int, const float*, int, float, float*,
                              int)>(next)(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    return CUBLAS_STATUS_SUCCESS;
  });
}
