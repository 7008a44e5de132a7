// A cuBLAS GEMM call as the --gemms shim read it (cublasSgemm_v2, cublasGemmEx, their batched and _64 forms, the
// legacy cublasSgemm: src/gemm_shim/blas_shim.cpp), and the gemmtune problem it is, where it is one.
//
// cuBLAS is column-major: C (m×n) = op(A) (m×k) · op(B) (k×n). A call is read as the cublasLtMatmul call with the
// same column-order layouts (A: m×k or, transposed, k×m, at lda; B likewise; C = D: m×n at ldc) and mapped as one
// (trace/lt_call.hpp): a row-major program's Y (M×N) = X·W is cuBLAS's C = Yᵀ, so M = n, N = m, and gemmtune's
// layout letters come from transb (A's) and transa (B's). The math mode is the compute type the call runs with:
// the routine's own (cublasGemmEx's computeType; 32F for the S routines), as the handle's math mode changes it
// (TF32_TENSOR_OP_MATH: 32F runs as 32F_FAST_TF32; PEDANTIC_MATH: an S routine runs 32F_PEDANTIC).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "trace/call_problem.hpp"

namespace gemmtune {

// cuBLAS's enum values, kept as plain integers so a trace file stays readable without cuBLAS's headers.
struct BlasCallDesc {
  std::string api;                 // the entry point: "cublasSgemm_v2", "cublasGemmStridedBatchedEx_64", ...
  int transa = 0, transb = 0;      // cublasOperation_t
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  int a_type = 0, b_type = 0, c_type = 0;  // cudaDataType (CUDA_R_32F = 0 for the S routines)
  int compute = -1;                // the call's cublasComputeType_t; -1: none given (an S routine: 32F)
  int math_mode = -1;              // the handle's cublasMath_t at the call; -1: none (the legacy API has no handle)
  int pointer_mode = 0;            // cublasPointerMode_t (HOST = 0)
  std::optional<double> alpha, beta;  // host values; absent where they live on the device
  std::int64_t batch = 1;          // batchCount of the batched forms
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // the strided-batched forms' strides

  bool operator==(const BlasCallDesc& o) const;
};

// The compute type the call runs with, from its own and the handle's math mode; nullopt for a math mode this
// gemmtune does not know.
std::optional<int> blas_effective_compute(const BlasCallDesc& call);

// The gemmtune problem of one call: a pure function, tested for every entry point, layout and leading dimension.
GemmCallProblem blas_call_problem(const BlasCallDesc& call);

void to_json(nlohmann::json& j, const BlasCallDesc& d);
// Throws InputError naming the field when j is not a call description.
void from_json(const nlohmann::json& j, BlasCallDesc& d);

}  // namespace gemmtune
