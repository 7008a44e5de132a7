// cuBLASLt matrix layouts as the call-mapping tests write them (trace/lt_call.hpp's LtMatrix): packed, column- or
// row-ordered.
#pragma once

#include <cublasLt.h>

#include <cstdint>

#include "trace/lt_call.hpp"

namespace gemmtune::test {

// A packed column-major rows×cols matrix of `type` (ld = rows).
inline LtMatrix col(std::uint64_t rows, std::uint64_t cols, int type = CUDA_R_32F) {
  LtMatrix m;
  m.type = type;
  m.order = CUBLASLT_ORDER_COL;
  m.rows = rows;
  m.cols = cols;
  m.ld = static_cast<std::int64_t>(rows);
  return m;
}

// A packed row-major rows×cols fp32 matrix (ld = cols).
inline LtMatrix row(std::uint64_t rows, std::uint64_t cols) {
  LtMatrix m = col(rows, cols);
  m.order = CUBLASLT_ORDER_ROW;
  m.ld = static_cast<std::int64_t>(cols);
  return m;
}

}  // namespace gemmtune::test
