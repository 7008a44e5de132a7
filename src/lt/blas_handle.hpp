// cuBLAS (not cuBLASLt) calls and handles: GT_BLAS_CALL(expr) throws as GT_LT_CALL does, and BlasHandle owns a
// cublasHandle_t (lt/lt_handles.hpp's LtObject).
#pragma once

#include <cublas_v2.h>

#include "lt/lt_call.hpp"
#include "lt/lt_handles.hpp"

#define GT_BLAS_CALL(expr) GT_CUBLAS_FAMILY_CALL("cuBLAS", cublasGetStatusName, expr)

namespace gemmtune {

using BlasHandle = LtObject<cublasHandle_t, cublasDestroy_v2>;

inline BlasHandle make_blas_handle() {
  cublasHandle_t h = nullptr;
  GT_BLAS_CALL(cublasCreate_v2(&h));
  return BlasHandle(h);
}

}  // namespace gemmtune
