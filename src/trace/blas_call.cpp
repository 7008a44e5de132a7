#include "trace/blas_call.hpp"

#include <cublasLt.h>

#include <climits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/json_fields.hpp"
#include "trace/lt_call.hpp"

namespace gemmtune {
namespace {

bool is_trans(int op) { return op == CUBLAS_OP_T || op == CUBLAS_OP_C; }

// The mode part of a cublasMath_t; DISALLOW_REDUCED_PRECISION_REDUCTION (16) is a flag beside it, masked off as
// cublas_api.h's own cublasMigrateComputeType does. Other bits are no mode this gemmtune knows.
constexpr int kMathModeBits = 0xf;
constexpr int kKnownMathFlags = CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;

std::string types_name(const BlasCallDesc& c) {
  if (c.a_type == c.b_type && c.b_type == c.c_type) return lt_data_type_name(c.a_type);
  return lt_data_type_name(c.a_type) + "/" + lt_data_type_name(c.b_type) + "/" + lt_data_type_name(c.c_type);
}

// The call in cuBLAS's own (column-major) terms, for calls that are not tunable.
std::string blas_shape(const BlasCallDesc& c) {
  std::ostringstream s;
  s << types_name(c) << " m " << c.m << " n " << c.n << " k " << c.k << " " << (is_trans(c.transa) ? 'T' : 'N')
    << (is_trans(c.transb) ? 'T' : 'N') << " ld " << c.lda << "/" << c.ldb << "/" << c.ldc;
  if (c.batch != 1) s << " batch " << c.batch;
  if (c.compute >= 0) s << " compute " << compute_type_name(c.compute);
  return s.str();
}

GemmCallProblem not_tunable(const BlasCallDesc& c, const std::string& why) {
  GemmCallProblem r;
  r.reason = why;
  r.shape = blas_shape(c);
  return r;
}

LtMatrix column_order(int type, std::int64_t rows, std::int64_t cols, std::int64_t ld, const BlasCallDesc& c,
                      std::int64_t stride) {
  LtMatrix m;
  m.type = type;
  m.order = CUBLASLT_ORDER_COL;
  m.rows = static_cast<std::uint64_t>(rows);
  m.cols = static_cast<std::uint64_t>(cols);
  m.ld = ld;
  m.batch = c.batch > INT_MAX ? INT_MAX : static_cast<int>(c.batch);
  m.stride = stride;
  return m;
}

// The cublasLtMatmul call that computes the same: column-order A (m×k, or k×m read transposed), B, and C = D.
LtCallDesc as_lt_call(const BlasCallDesc& c, int compute) {
  const bool ta = is_trans(c.transa), tb = is_trans(c.transb);
  LtCallDesc d;
  d.compute = compute;
  d.scale = CUDA_R_32F;
  d.pointer_mode = c.pointer_mode;
  d.transa = c.transa;
  d.transb = c.transb;
  d.a = column_order(c.a_type, ta ? c.k : c.m, ta ? c.m : c.k, c.lda, c, c.stride_a);
  d.b = column_order(c.b_type, tb ? c.n : c.k, tb ? c.k : c.n, c.ldb, c, c.stride_b);
  d.c = d.d = column_order(c.c_type, c.m, c.n, c.ldc, c, c.stride_c);
  d.alpha = c.alpha;
  d.beta = c.beta;
  return d;
}

}  // namespace

bool BlasCallDesc::operator==(const BlasCallDesc& o) const {
  return api == o.api && transa == o.transa && transb == o.transb && m == o.m && n == o.n && k == o.k &&
         lda == o.lda && ldb == o.ldb && ldc == o.ldc && a_type == o.a_type && b_type == o.b_type &&
         c_type == o.c_type && compute == o.compute && math_mode == o.math_mode && pointer_mode == o.pointer_mode &&
         alpha == o.alpha && beta == o.beta && batch == o.batch && stride_a == o.stride_a &&
         stride_b == o.stride_b && stride_c == o.stride_c;
}

std::optional<int> blas_effective_compute(const BlasCallDesc& c) {
  if (c.math_mode >= 0 && (c.math_mode & ~kMathModeBits & ~kKnownMathFlags) != 0) return std::nullopt;
  const int math = c.math_mode < 0 ? CUBLAS_DEFAULT_MATH : (c.math_mode & kMathModeBits);
  // A compute type other than 32F runs as it says; so does 32F_PEDANTIC under any math mode.
  if (c.compute >= 0 && c.compute != CUBLAS_COMPUTE_32F) return c.compute;
  // PEDANTIC_MATH makes the S routines pedantic (cublas_api.h); a computeType given is not changed by it.
  if (c.compute < 0 && math == CUBLAS_PEDANTIC_MATH) return CUBLAS_COMPUTE_32F_PEDANTIC;
  switch (math) {
    case CUBLAS_DEFAULT_MATH:
    case CUBLAS_PEDANTIC_MATH:
    case CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH:  // double precision only
      return CUBLAS_COMPUTE_32F;
    case CUBLAS_TF32_TENSOR_OP_MATH: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case CUBLAS_TENSOR_OP_MATH: return CUBLAS_COMPUTE_32F_FAST_16F;  // deprecated: "same effect as" that type
    case CUBLAS_FP32_EMULATED_BF16X9_MATH: return CUBLAS_COMPUTE_32F_EMULATED_16BFX9;
    default: return std::nullopt;
  }
}

GemmCallProblem blas_call_problem(const BlasCallDesc& c) {
  if (c.m < 0 || c.n < 0 || c.k < 0 || c.batch < 0 || c.lda < 1 || c.ldb < 1 || c.ldc < 1)
    return not_tunable(c, "invalid sizes (cuBLAS refuses the call)");
  if (c.m == 0 || c.n == 0 || c.k == 0 || c.batch == 0)
    return not_tunable(c, "an empty product (m, n, k or the batch count is 0)");
  const std::optional<int> compute = blas_effective_compute(c);
  if (!compute) return not_tunable(c, "math mode " + std::to_string(c.math_mode) + ": not known to this gemmtune");
  GemmCallProblem r = lt_call_problem(as_lt_call(c, *compute));
  if (!r.tunable) r.shape = blas_shape(c);
  return r;
}

namespace {

std::optional<double> scalar_from(const nlohmann::json& j, const JsonFields& f, const std::string& name) {
  if (!j.contains(name) || j.at(name).is_null()) return std::nullopt;
  return f.number(name);
}

}  // namespace

void to_json(nlohmann::json& j, const BlasCallDesc& d) {
  j = {{"api", d.api},
       {"transa", d.transa},
       {"transb", d.transb},
       {"m", d.m},
       {"n", d.n},
       {"k", d.k},
       {"lda", d.lda},
       {"ldb", d.ldb},
       {"ldc", d.ldc},
       {"a_type", d.a_type},
       {"b_type", d.b_type},
       {"c_type", d.c_type},
       {"compute", d.compute},
       {"math_mode", d.math_mode},
       {"pointer_mode", d.pointer_mode},
       {"alpha", d.alpha ? nlohmann::json(*d.alpha) : nlohmann::json(nullptr)},
       {"beta", d.beta ? nlohmann::json(*d.beta) : nlohmann::json(nullptr)},
       {"batch", d.batch},
       {"stride_a", d.stride_a},
       {"stride_b", d.stride_b},
       {"stride_c", d.stride_c}};
}

void from_json(const nlohmann::json& j, BlasCallDesc& d) {
  const JsonFields f(j, "cuBLAS call");
  d.api = f.string("api");
  if (d.api.empty()) f.fail("api", "must not be empty");
  d.transa = static_cast<int>(f.integer("transa"));
  d.transb = static_cast<int>(f.integer("transb"));
  d.m = f.integer("m");
  d.n = f.integer("n");
  d.k = f.integer("k");
  d.lda = f.integer("lda");
  d.ldb = f.integer("ldb");
  d.ldc = f.integer("ldc");
  d.a_type = static_cast<int>(f.integer("a_type"));
  d.b_type = static_cast<int>(f.integer("b_type"));
  d.c_type = static_cast<int>(f.integer("c_type"));
  d.compute = static_cast<int>(f.integer("compute"));
  d.math_mode = static_cast<int>(f.integer("math_mode"));
  d.pointer_mode = static_cast<int>(f.integer("pointer_mode"));
  d.alpha = scalar_from(j, f, "alpha");
  d.beta = scalar_from(j, f, "beta");
  d.batch = f.integer("batch");
  d.stride_a = f.integer("stride_a");
  d.stride_b = f.integer("stride_b");
  d.stride_c = f.integer("stride_c");
}

}  // namespace gemmtune
