// GT_CUPTI_CALL(expr): runs a CUPTI call and throws gemmtune::CheckError with its text, file and line.
#pragma once

#include <cupti.h>

#include "common/error.hpp"

namespace gemmtune::detail {
inline const char* cupti_result_name(CUptiResult r) {
  const char* s = nullptr;
  return cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s ? s : "unknown CUPTI error";
}
}  // namespace gemmtune::detail

#define GT_CUPTI_CALL(expr)                                                                                  \
  do {                                                                                                       \
    const CUptiResult gt_status_ = (expr);                                                                   \
    if (gt_status_ != CUPTI_SUCCESS)                                                                         \
      ::gemmtune::detail::throw_call_error("CUPTI", static_cast<long long>(gt_status_),                      \
                                           ::gemmtune::detail::cupti_result_name(gt_status_), #expr, __FILE__, \
                                           __LINE__);                                                        \
  } while (0)
