// The gemmtune problem one recorded GEMM call is (a cublasLtMatmul call: trace/lt_call.hpp; a cuBLAS call:
// trace/blas_call.hpp), or why it is not one.
#pragma once

#include <string>

#include "problem/gemm_problem.hpp"

namespace gemmtune {

struct GemmCallProblem {
  bool tunable = false;
  GemmProblem problem;   // valid when tunable
  std::string reason;    // why not tunable ("bf16 data: not tunable yet")
  std::string shape;     // what the call is, tunable or not: "1024x4096x1024 nt fp32 bias", "bf16 64x64x64 batch 8"
};

}  // namespace gemmtune
