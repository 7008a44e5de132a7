// Calls of the fake cuBLAS's module (tests/trace/fake_cublas/fake_blas_module.cpp) as the shim's and the routing
// rule's tests write them: a call in cuBLAS's terms, and the spec line the module reads it from.
#pragma once

#include <cublas_api.h>

#include <cstdint>
#include <sstream>
#include <string>

#include "trace/blas_call.hpp"

namespace gemmtune::test {

// One call in cuBLAS's terms: C (m×n) = op(A)·op(B) with the given leading dimensions, fp32, host alpha 1 beta 0.
inline BlasCallDesc call(const char* api, int transa, int transb, std::int64_t m, std::int64_t n, std::int64_t k,
                         std::int64_t lda, std::int64_t ldb, std::int64_t ldc) {
  BlasCallDesc c;
  c.api = api;
  c.transa = transa;
  c.transb = transb;
  c.m = m;
  c.n = n;
  c.k = k;
  c.lda = lda;
  c.ldb = ldb;
  c.ldc = ldc;
  c.math_mode = CUBLAS_DEFAULT_MATH;
  c.alpha = 1.0;
  c.beta = 0.0;
  return c;
}

inline BlasCallDesc with_compute(BlasCallDesc c, int compute) {
  c.compute = compute;
  return c;
}

inline BlasCallDesc with_math(BlasCallDesc c, int math) {
  c.math_mode = math;
  return c;
}

inline BlasCallDesc batched(BlasCallDesc c, std::int64_t count, std::int64_t sa = 0, std::int64_t sb = 0,
                            std::int64_t sc = 0) {
  c.batch = count;
  c.stride_a = sa;
  c.stride_b = sb;
  c.stride_c = sc;
  return c;
}

// The module's spec of a call: the entry point's name and 21 numbers.
inline std::string spec(const BlasCallDesc& c) {
  std::ostringstream s;
  s << c.api << " " << c.transa << " " << c.transb << " " << c.m << " " << c.n << " " << c.k << " " << c.lda << " "
    << c.ldb << " " << c.ldc << " " << c.a_type << " " << c.b_type << " " << c.c_type << " " << c.compute << " "
    << c.math_mode << " " << c.pointer_mode << " " << c.alpha.value_or(7.0) << " " << c.beta.value_or(7.0) << " "
    << c.batch << " " << c.stride_a << " " << c.stride_b << " " << c.stride_c;
  return s.str();
}

}  // namespace gemmtune::test
