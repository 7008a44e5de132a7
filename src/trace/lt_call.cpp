#include "trace/lt_call.hpp"

#include <cublasLt.h>

#include <sstream>

#include "common/error.hpp"
#include "common/json_fields.hpp"

namespace gemmtune {
namespace {

bool is_trans(int op) { return op == CUBLAS_OP_T || op == CUBLAS_OP_C; }

bool same_matrix(const LtMatrix& x, const LtMatrix& y) {
  return x.type == y.type && x.order == y.order && x.rows == y.rows && x.cols == y.cols && x.ld == y.ld &&
         x.batch == y.batch && x.stride == y.stride;
}

// The packed leading dimension of a matrix in its order: what gemmtune's row-major operands have.
std::int64_t packed_ld(const LtMatrix& x) {
  return static_cast<std::int64_t>(x.order == CUBLASLT_ORDER_ROW ? x.cols : x.rows);
}

// A single column (of a column-order matrix) or row (of a row-order one) is contiguous at any leading dimension.
bool is_packed(const LtMatrix& x) {
  const std::uint64_t lines = x.order == CUBLASLT_ORDER_ROW ? x.rows : x.cols;
  return lines <= 1 || x.ld == packed_ld(x);
}

struct Epi {
  bool known = false;
  Epilogue epi;
};

Epi map_epilogue(std::uint32_t e) {
  Epi r;
  r.known = true;
  switch (e) {
    case CUBLASLT_EPILOGUE_DEFAULT: break;
    case CUBLASLT_EPILOGUE_BIAS: r.epi.bias = true; break;
    case CUBLASLT_EPILOGUE_RELU: r.epi.act = Activation::Relu; break;
    case CUBLASLT_EPILOGUE_RELU_BIAS: r.epi.bias = true; r.epi.act = Activation::Relu; break;
    case CUBLASLT_EPILOGUE_GELU: r.epi.act = Activation::Gelu; break;  // cuBLASLt's GELU is the tanh form, as ours
    case CUBLASLT_EPILOGUE_GELU_BIAS: r.epi.bias = true; r.epi.act = Activation::Gelu; break;
    case CUBLASLT_EPILOGUE_GELU_AUX: r.epi.act = Activation::Gelu; r.epi.save_z = true; break;
    case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
      r.epi.bias = true;
      r.epi.act = Activation::Gelu;
      r.epi.save_z = true;
      break;
    default: r.known = false;  // RELU_AUX (a bit mask, not Z) and the backward epilogues (DRELU, DGELU, BGRAD*)
  }
  return r;
}

std::string dims(std::uint64_t m, std::uint64_t n, std::uint64_t k) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

// The call's product shape in cuBLASLt's own terms (D rows × D cols × inner), for calls that are not tunable.
std::string raw_shape(const LtCallDesc& c) {
  std::ostringstream s;
  if (c.a) s << lt_data_type_name(c.a->type);
  if (c.d) {
    const std::uint64_t inner = c.a ? (is_trans(c.transa) ? c.a->rows : c.a->cols) : 0;
    s << " D " << c.d->rows << "x" << c.d->cols << " k " << inner;
    if (c.d->batch > 1) s << " batch " << c.d->batch;
  }
  s << " " << (is_trans(c.transa) ? 'T' : 'N') << (is_trans(c.transb) ? 'T' : 'N') << " "
    << lt_epilogue_name(c.epilogue);
  return s.str();
}

GemmCallProblem not_tunable(const LtCallDesc& c, const std::string& why) {
  GemmCallProblem r;
  r.reason = why;
  r.shape = raw_shape(c);
  return r;
}

}  // namespace

bool LtCallDesc::operator==(const LtCallDesc& o) const {
  const auto same = [](const std::optional<LtMatrix>& x, const std::optional<LtMatrix>& y) {
    return x.has_value() == y.has_value() && (!x || same_matrix(*x, *y));
  };
  return compute == o.compute && scale == o.scale && pointer_mode == o.pointer_mode && transa == o.transa &&
         transb == o.transb && epilogue == o.epilogue && bias == o.bias && bias_type == o.bias_type &&
         aux == o.aux && aux_ld == o.aux_ld && aux_type == o.aux_type && alpha == o.alpha && beta == o.beta &&
         same(a, o.a) && same(b, o.b) && same(c, o.c) && same(d, o.d);
}

std::string lt_data_type_name(int type) {
  switch (type) {
    case CUDA_R_32F: return "fp32";
    case CUDA_R_64F: return "fp64";
    case CUDA_R_16F: return "fp16";
    case CUDA_R_16BF: return "bf16";
    case CUDA_R_8I: return "int8";
    case CUDA_R_32I: return "int32";
    case CUDA_R_8F_E4M3: return "fp8e4m3";
    case CUDA_R_8F_E5M2: return "fp8e5m2";
    case CUDA_C_32F: return "complex fp32";
    default: return "type " + std::to_string(type);
  }
}

std::string compute_type_name(int compute) {
  switch (compute) {
    case CUBLAS_COMPUTE_16F: return "16F";
    case CUBLAS_COMPUTE_16F_PEDANTIC: return "16F_PEDANTIC";
    case CUBLAS_COMPUTE_32F: return "32F";
    case CUBLAS_COMPUTE_32F_PEDANTIC: return "32F_PEDANTIC";
    case CUBLAS_COMPUTE_32F_FAST_16F: return "32F_FAST_16F";
    case CUBLAS_COMPUTE_32F_FAST_16BF: return "32F_FAST_16BF";
    case CUBLAS_COMPUTE_32F_FAST_TF32: return "32F_FAST_TF32";
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9: return "32F_EMULATED_16BFX9";
    case CUBLAS_COMPUTE_64F: return "64F";
    case CUBLAS_COMPUTE_64F_PEDANTIC: return "64F_PEDANTIC";
    case CUBLAS_COMPUTE_32I: return "32I";
    case CUBLAS_COMPUTE_32I_PEDANTIC: return "32I_PEDANTIC";
    default: return std::to_string(compute);
  }
}

std::string lt_epilogue_name(std::uint32_t e) {
  switch (e) {
    case CUBLASLT_EPILOGUE_DEFAULT: return "none";
    case CUBLASLT_EPILOGUE_BIAS: return "BIAS";
    case CUBLASLT_EPILOGUE_RELU: return "RELU";
    case CUBLASLT_EPILOGUE_RELU_BIAS: return "RELU_BIAS";
    case CUBLASLT_EPILOGUE_RELU_AUX: return "RELU_AUX";
    case CUBLASLT_EPILOGUE_RELU_AUX_BIAS: return "RELU_AUX_BIAS";
    case CUBLASLT_EPILOGUE_GELU: return "GELU";
    case CUBLASLT_EPILOGUE_GELU_BIAS: return "GELU_BIAS";
    case CUBLASLT_EPILOGUE_GELU_AUX: return "GELU_AUX";
    case CUBLASLT_EPILOGUE_GELU_AUX_BIAS: return "GELU_AUX_BIAS";
    case CUBLASLT_EPILOGUE_DRELU: return "DRELU";
    case CUBLASLT_EPILOGUE_DRELU_BGRAD: return "DRELU_BGRAD";
    case CUBLASLT_EPILOGUE_DGELU: return "DGELU";
    case CUBLASLT_EPILOGUE_DGELU_BGRAD: return "DGELU_BGRAD";
    case CUBLASLT_EPILOGUE_BGRADA: return "BGRADA";
    case CUBLASLT_EPILOGUE_BGRADB: return "BGRADB";
    default: return "epilogue " + std::to_string(e);
  }
}

GemmCallProblem lt_call_problem(const LtCallDesc& c) {
  if (!c.a || !c.b || !c.d) return not_tunable(c, "the shim could not read the matrix layouts");
  const LtMatrix& A = *c.a;
  const LtMatrix& B = *c.b;
  const LtMatrix& D = *c.d;
  const LtMatrix& C = c.c ? *c.c : D;
  for (const LtMatrix* x : {&A, &B, &C, &D})
    if (x->type != CUDA_R_32F) return not_tunable(c, lt_data_type_name(x->type) + " data: not tunable yet (fp32 only)");
  MathMode mode;
  if (c.compute == CUBLAS_COMPUTE_32F || c.compute == CUBLAS_COMPUTE_32F_PEDANTIC)
    mode = MathMode::Fp32;
  else if (c.compute == CUBLAS_COMPUTE_32F_FAST_TF32)
    mode = MathMode::Tf32;
  else
    return not_tunable(c, "compute type " + compute_type_name(c.compute) +
                              ": not tunable yet (32F and 32F_FAST_TF32 only)");
  for (const LtMatrix* x : {&A, &B, &D})
    if (x->batch > 1) return not_tunable(c, "batched (" + std::to_string(x->batch) + "): not tunable yet");
  for (const LtMatrix* x : {&A, &B, &D})
    if (x->order != CUBLASLT_ORDER_COL && x->order != CUBLASLT_ORDER_ROW)
      return not_tunable(c, "a tiled matrix order (" + std::to_string(x->order) + "): not tunable");
  if (!c.alpha || !c.beta) return not_tunable(c, "alpha/beta live on the device: cannot tell the problem");
  if (*c.alpha != 1.0) return not_tunable(c, "alpha = " + std::to_string(*c.alpha) + " (gemmtune computes alpha = 1)");
  if (*c.beta != 0.0) return not_tunable(c, "beta = " + std::to_string(*c.beta) + " (accumulates into C)");
  const Epi e = map_epilogue(c.epilogue);
  if (!e.known) return not_tunable(c, "epilogue " + lt_epilogue_name(c.epilogue) + ": not tunable yet");
  if (e.epi.bias && !c.bias) return not_tunable(c, "a bias epilogue without a bias pointer");
  if (e.epi.bias && c.bias_type != -1 && c.bias_type != CUDA_R_32F)
    return not_tunable(c, lt_data_type_name(c.bias_type) + " bias: not tunable yet");
  if (e.epi.save_z && c.aux_type != -1 && c.aux_type != CUDA_R_32F)
    return not_tunable(c, lt_data_type_name(c.aux_type) + " aux output: not tunable yet");

  // op(A) is D.rows × k and op(B) is k × D.cols.
  const bool ta = is_trans(c.transa), tb = is_trans(c.transb);
  const std::uint64_t a_rows = ta ? A.cols : A.rows, a_inner = ta ? A.rows : A.cols;
  const std::uint64_t b_inner = tb ? B.cols : B.rows, b_cols = tb ? B.rows : B.cols;
  if (a_rows != D.rows || b_cols != D.cols || a_inner != b_inner || a_inner == 0 || D.rows == 0 || D.cols == 0)
    return not_tunable(c, "the layouts do not multiply (op(A) " + std::to_string(a_rows) + "x" +
                              std::to_string(a_inner) + ", op(B) " + std::to_string(b_inner) + "x" +
                              std::to_string(b_cols) + ", D " + std::to_string(D.rows) + "x" +
                              std::to_string(D.cols) + ")");
  for (const LtMatrix* x : {&A, &B, &D})
    if (!is_packed(*x))
      return not_tunable(c, "leading dimension " + std::to_string(x->ld) + " where " + std::to_string(packed_ld(*x)) +
                                " is packed (a strided view): not tunable yet");

  GemmProblem p;
  p.mode = mode;
  p.epi = e.epi;
  p.k = static_cast<std::int64_t>(a_inner);
  const bool d_row = D.order == CUBLASLT_ORDER_ROW;
  if (d_row && e.epi.save_z) return not_tunable(c, "an aux output with a row-order D: not tunable yet");
  if (!d_row || e.epi.bias) {
    // Y = Dᵀ (row-major m×n, or with a row-order D its transposed store): gemmtune's A = op(B)ᵀ, B = op(A)ᵀ.
    // op(B)ᵀ is stored as gemmtune's A itself when B is column-order and not transposed, or row-order and transposed.
    p.m = static_cast<std::int64_t>(D.cols);
    p.n = static_cast<std::int64_t>(D.rows);
    p.trans_a = tb != (B.order == CUBLASLT_ORDER_ROW);
    p.trans_b = ta != (A.order == CUBLASLT_ORDER_ROW);
    p.out = d_row ? OutputLayout::Transposed : OutputLayout::RowMajor;
  } else {
    // A row-order D without a bias is Y itself: gemmtune's A = op(A), B = op(B).
    p.m = static_cast<std::int64_t>(D.rows);
    p.n = static_cast<std::int64_t>(D.cols);
    p.trans_a = ta != (A.order == CUBLASLT_ORDER_COL);
    p.trans_b = tb != (B.order == CUBLASLT_ORDER_COL);
    p.out = OutputLayout::RowMajor;
  }
  if (e.epi.save_z && c.aux_ld != p.n)
    return not_tunable(c, "aux leading dimension " + std::to_string(c.aux_ld) + " where " + std::to_string(p.n) +
                              " is packed: not tunable yet");
  try {
    p.validate();
  } catch (const InputError& err) {
    return not_tunable(c, err.what());
  }
  GemmCallProblem r;
  r.tunable = true;
  r.problem = p;
  r.shape = dims(static_cast<std::uint64_t>(p.m), static_cast<std::uint64_t>(p.n), static_cast<std::uint64_t>(p.k)) +
            " " + p.layout() + " " + to_string(p.mode) + " " + p.epi.key();
  return r;
}

namespace {

nlohmann::json matrix_json(const std::optional<LtMatrix>& m) {
  if (!m) return nullptr;
  return {{"type", m->type}, {"order", m->order}, {"rows", m->rows}, {"cols", m->cols},
          {"ld", m->ld},     {"batch", m->batch}, {"stride", m->stride}};
}

std::optional<LtMatrix> matrix_from(const nlohmann::json& j, const JsonFields& parent, const std::string& name) {
  if (!j.contains(name) || j.at(name).is_null()) return std::nullopt;
  const JsonFields f = parent.object(name);
  LtMatrix m;
  m.type = static_cast<int>(f.integer("type"));
  m.order = static_cast<int>(f.integer("order"));
  const std::int64_t rows = f.integer("rows"), cols = f.integer("cols");
  if (rows < 0 || cols < 0) f.fail("rows", "must not be negative");
  m.rows = static_cast<std::uint64_t>(rows);
  m.cols = static_cast<std::uint64_t>(cols);
  m.ld = f.integer("ld");
  m.batch = static_cast<int>(f.integer("batch"));
  m.stride = f.has("stride") ? f.integer("stride") : 0;
  return m;
}

std::optional<double> scalar_from(const nlohmann::json& j, const JsonFields& f, const std::string& name) {
  if (!j.contains(name) || j.at(name).is_null()) return std::nullopt;
  return f.number(name);
}

}  // namespace

void to_json(nlohmann::json& j, const LtCallDesc& d) {
  j = {{"compute", d.compute},
       {"scale", d.scale},
       {"pointer_mode", d.pointer_mode},
       {"transa", d.transa},
       {"transb", d.transb},
       {"epilogue", d.epilogue},
       {"bias", d.bias},
       {"bias_type", d.bias_type},
       {"aux", d.aux},
       {"aux_ld", d.aux_ld},
       {"aux_type", d.aux_type},
       {"alpha", d.alpha ? nlohmann::json(*d.alpha) : nlohmann::json(nullptr)},
       {"beta", d.beta ? nlohmann::json(*d.beta) : nlohmann::json(nullptr)},
       {"a", matrix_json(d.a)},
       {"b", matrix_json(d.b)},
       {"c", matrix_json(d.c)},
       {"d", matrix_json(d.d)}};
}

void from_json(const nlohmann::json& j, LtCallDesc& d) {
  const JsonFields f(j, "cublasLtMatmul call");
  d.compute = static_cast<int>(f.integer("compute"));
  d.scale = static_cast<int>(f.integer("scale"));
  d.pointer_mode = static_cast<int>(f.integer("pointer_mode"));
  d.transa = static_cast<int>(f.integer("transa"));
  d.transb = static_cast<int>(f.integer("transb"));
  const std::int64_t epi = f.integer("epilogue");
  if (epi < 0) f.fail("epilogue", "must not be negative");
  d.epilogue = static_cast<std::uint32_t>(epi);
  d.bias = f.boolean("bias");
  d.bias_type = static_cast<int>(f.integer("bias_type"));
  d.aux = f.boolean("aux");
  d.aux_ld = f.integer("aux_ld");
  d.aux_type = static_cast<int>(f.integer("aux_type"));
  d.alpha = scalar_from(j, f, "alpha");
  d.beta = scalar_from(j, f, "beta");
  d.a = matrix_from(j, f, "a");
  d.b = matrix_from(j, f, "b");
  d.c = matrix_from(j, f, "c");
  d.d = matrix_from(j, f, "d");
}

}  // namespace gemmtune
