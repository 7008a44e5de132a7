// GT_CUDA_CALL(expr): runs a CUDA runtime call and throws gemmtune::CheckError with its text, file and line.
#pragma once

#include <cuda_runtime_api.h>

#include "common/error.hpp"

#define GT_CUDA_CALL(expr)                                                                                   \
  do {                                                                                                       \
    const cudaError_t gt_status_ = (expr);                                                                   \
    if (gt_status_ != cudaSuccess)                                                                           \
      ::gemmtune::detail::throw_call_error("CUDA", static_cast<long long>(gt_status_),                       \
                                           cudaGetErrorString(gt_status_), #expr, __FILE__, __LINE__);       \
  } while (0)

// After a <<<>>> launch: configuration errors surface here, not at the next synchronizing call.
#define GT_CUDA_CHECK_LAUNCH() GT_CUDA_CALL(cudaGetLastError())
