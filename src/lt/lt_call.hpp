// GT_LT_CALL(expr): runs a cuBLASLt call and throws gemmtune::CheckError with its text, file and line.
#pragma once

#include <cublasLt.h>

#include "common/error.hpp"

#define GT_LT_CALL(expr)                                                                                   \
  do {                                                                                                     \
    const cublasStatus_t gt_status_ = (expr);                                                              \
    if (gt_status_ != CUBLAS_STATUS_SUCCESS)                                                               \
      ::gemmtune::detail::throw_call_error("cuBLASLt", static_cast<long long>(gt_status_),                 \
                                           cublasLtGetStatusName(gt_status_), #expr, __FILE__, __LINE__);  \
  } while (0)
