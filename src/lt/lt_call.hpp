// GT_LT_CALL(expr): runs a cuBLASLt call and throws gemmtune::CheckError with its text, file and line (cuBLAS's calls:
// GT_BLAS_CALL in lt/blas_handle.hpp, the same way).
#pragma once

#include <cublasLt.h>

#include "common/error.hpp"

// The cuBLAS family's calls return cublasStatus_t; `status_name` is the library's own name for a status.
#define GT_CUBLAS_FAMILY_CALL(library, status_name, expr)                                                  \
  do {                                                                                                     \
    const cublasStatus_t gt_status_ = (expr);                                                              \
    if (gt_status_ != CUBLAS_STATUS_SUCCESS)                                                               \
      ::gemmtune::detail::throw_call_error(library, static_cast<long long>(gt_status_),                    \
                                           status_name(gt_status_), #expr, __FILE__, __LINE__);            \
  } while (0)

#define GT_LT_CALL(expr) GT_CUBLAS_FAMILY_CALL("cuBLASLt", cublasLtGetStatusName, expr)
