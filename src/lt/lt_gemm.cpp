#include "lt/lt_gemm.hpp"

#include <algorithm>
#include <cstring>
#include <set>

#include "kernels/epilogue_kernel.hpp"
#include "kernels/padded_copy.hpp"

namespace gemmtune {
namespace {

template <typename T>
void set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const T& value) {
  GT_LT_CALL(cublasLtMatmulDescSetAttribute(d, attr, &value, sizeof(value)));
}

// cuBLASLt's epilogue for p when it has one, or DEFAULT with *fused = false when our kernel must finish the job.
cublasLtEpilogue_t choose_epilogue(const GemmProblem& p, bool row_output, bool* fused) {
  const Epilogue& e = p.epi;
  // Nothing to apply (the backward's GEMMs): the GEMM alone is the whole call, however the output is stored.
  *fused = e == Epilogue{};
  if (*fused) return CUBLASLT_EPILOGUE_DEFAULT;
  // Its bias broadcasts along D's rows only (our columns when the output is row-major); dropout it has not.
  if (!row_output || e.dropout()) return CUBLASLT_EPILOGUE_DEFAULT;
  // Its AUX output needs a leading dimension that is a multiple of 8 (cuBLASLt docs, EPILOGUE_AUX_LD).
  const bool aux_ok = p.n % 8 == 0;
  switch (e.act) {
    case Activation::None:
      if (e.save_z) return CUBLASLT_EPILOGUE_DEFAULT;  // Z == Y, but cuBLASLt writes one output
      *fused = true;
      return e.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    case Activation::Relu:
      if (e.save_z) return CUBLASLT_EPILOGUE_DEFAULT;  // RELU_AUX stores a bit mask, not Z
      *fused = true;
      return e.bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case Activation::Gelu:  // cuBLASLt's GELU is the tanh form, as ours
      if (e.save_z && !aux_ok) return CUBLASLT_EPILOGUE_DEFAULT;
      *fused = true;
      if (e.save_z) return e.bias ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX;
      return e.bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    default:
      return CUBLASLT_EPILOGUE_DEFAULT;
  }
}

// Config attributes have different widths (int32, uint32, uint16); ask cuBLASLt for each one's size.
std::size_t config_attr_size(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  std::size_t written = 0;
  GT_LT_CALL(cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, nullptr, 0, &written));
  return written;
}

int get_config(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  const std::size_t size = config_attr_size(algo, attr);
  std::uint64_t raw = 0;  // little-endian: the low bytes hold the value whatever its width
  std::size_t written = 0;
  GT_LT_CALL(cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &raw, size, &written));
  return static_cast<int>(raw);
}

void set_config(cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr, int value) {
  const std::size_t size = config_attr_size(algo, attr);
  const std::uint64_t raw = static_cast<std::uint64_t>(static_cast<std::uint32_t>(value));
  GT_LT_CALL(cublasLtMatmulAlgoConfigSetAttribute(&algo, attr, &raw, size));
}

LtPreference make_preference(std::size_t max_workspace) {
  cublasLtMatmulPreference_t pref = nullptr;
  GT_LT_CALL(cublasLtMatmulPreferenceCreate(&pref));
  LtPreference owned(pref);
  const std::uint64_t ws = max_workspace;
  GT_LT_CALL(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  return owned;
}

}  // namespace

std::string LtGemm::unsupported_reason(const GemmProblem& p) {
  if (p.mode == MathMode::Tf32x3) return "cuBLASLt has no 3xtf32 mode (compare against its fp32)";
  if (p.pass != Pass::Forward) return "cuBLASLt candidates are enumerated for forward problems only";
  return "";
}

std::string LtGemm::padding_unsupported_reason(const GemmProblem& p) {
  const std::optional<LtPadding> padding = lt_padding(p);
  if (!padding) return "every stored matrix's rows are 16-byte aligned already: there is nothing to pad";
  if (padding->floats > kMaxPaddingFloats)
    return "padding would take " + std::to_string(padding->floats * sizeof(float) >> 20) +
           " MiB of scratch, more than " + std::to_string(kMaxPaddingFloats * sizeof(float) >> 20);
  return "";
}

std::string LtGemm::bias_in_gemm_unsupported_reason(const GemmProblem& p) {
  if (!p.epi.bias) return "the problem has no bias for cuBLASLt's BIAS epilogue";
  Epilogue rest = p.epi;
  rest.bias = false;
  if (rest == Epilogue{}) return "a bias alone is cuBLASLt's fused BIAS epilogue: nothing is left for our kernel";
  if (p.out != OutputLayout::RowMajor) return "cuBLASLt's bias runs along the transposed output's columns";
  return "";
}

LtGemm::LtGemm(cublasLtHandle_t handle, const GemmProblem& caller_problem, LtEpilogueMode mode)
    : handle_(handle), problem_(caller_problem) {
  problem_.validate();
  if (const std::string why = unsupported_reason(problem_); !why.empty()) throw InputError(why);
  if (mode == LtEpilogueMode::Padded) {
    if (const std::string why = padding_unsupported_reason(problem_); !why.empty()) throw InputError(why);
    padding_ = lt_padding(problem_);
  }
  if (mode == LtEpilogueMode::BiasInGemm) {
    if (const std::string why = bias_in_gemm_unsupported_reason(problem_); !why.empty()) throw InputError(why);
    bias_in_gemm_ = true;
  }
  kernel_problem_ = problem_;
  kernel_problem_.epi.bias = problem_.epi.bias && !bias_in_gemm_;
  // What cuBLASLt computes: the problem itself, or its padded plain GEMM.
  const GemmProblem& p = padding_ ? padding_->padded : problem_;
  swapped_ = p.out == OutputLayout::RowMajor;
  compute_ = p.mode == MathMode::Tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;

  cublasLtMatmulDesc_t desc = nullptr;
  GT_LT_CALL(cublasLtMatmulDescCreate(&desc, compute_, CUDA_R_32F));
  desc_ = LtMatmulDesc(desc);

  const auto m = static_cast<std::uint64_t>(p.m), n = static_cast<std::uint64_t>(p.n),
             k = static_cast<std::uint64_t>(p.k);
  // Row-major storage read column-major is the transpose: a row-major A (m×k, ld k) is a column-major k×m matrix.
  // Stored shapes (rows×cols of the column-major view) and leading dimensions:
  const std::uint64_t a_rows = p.trans_a ? m : k, a_cols = p.trans_a ? k : m;  // A: row-major m×k or k×m
  const std::uint64_t b_rows = p.trans_b ? k : n, b_cols = p.trans_b ? n : k;  // B: row-major k×n or n×k
  cublasOperation_t op_lt_a, op_lt_b;
  if (swapped_) {
    // Yᵀ (n×m) = op(Bᵀ-view)·op(Aᵀ-view). B's column-major view is n×k when not transposed: op N.
    a_layout_ = make_lt_layout(b_rows, b_cols, static_cast<std::int64_t>(b_rows));
    b_layout_ = make_lt_layout(a_rows, a_cols, static_cast<std::int64_t>(a_rows));
    op_lt_a = p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    op_lt_b = p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    d_layout_ = make_lt_layout(n, m, static_cast<std::int64_t>(n));
  } else {
    // Y stored n×m row-major is the column-major m×n product itself: A's view is k×m, so op T gives m×k.
    a_layout_ = make_lt_layout(a_rows, a_cols, static_cast<std::int64_t>(a_rows));
    b_layout_ = make_lt_layout(b_rows, b_cols, static_cast<std::int64_t>(b_rows));
    op_lt_a = p.trans_a ? CUBLAS_OP_N : CUBLAS_OP_T;
    op_lt_b = p.trans_b ? CUBLAS_OP_N : CUBLAS_OP_T;
    d_layout_ = make_lt_layout(m, n, static_cast<std::int64_t>(m));
  }
  set_desc(desc, CUBLASLT_MATMUL_DESC_TRANSA, op_lt_a);
  set_desc(desc, CUBLASLT_MATMUL_DESC_TRANSB, op_lt_b);

  const cublasLtEpilogue_t epi = mode == LtEpilogueMode::PreferFused ? choose_epilogue(p, swapped_, &fused_)
                                 : bias_in_gemm_                     ? CUBLASLT_EPILOGUE_BIAS
                                                                     : CUBLASLT_EPILOGUE_DEFAULT;
  if (mode != LtEpilogueMode::PreferFused) fused_ = false;
  set_desc(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, epi);
  if (fused_ && p.epi.save_z) {
    const std::int64_t aux_ld = p.n;
    set_desc(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, aux_ld);
  }
}

void LtGemm::bind_pointers(const GemmOperands& x) const {
  if (!fused_ && !bias_in_gemm_) return;
  // Descriptor pointers change with every rotating input set; setting them is host-only bookkeeping.
  if (problem_.epi.bias) set_desc(desc_.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(x.bias));
  if (fused_ && problem_.epi.save_z)
    set_desc(desc_.get(), CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, static_cast<void*>(x.Z));
}

LtAlgoFields LtGemm::read_algo_fields(const cublasLtMatmulAlgo_t& algo) {
  LtAlgoFields f;
  f.algo_id = get_config(algo, CUBLASLT_ALGO_CONFIG_ID);
  f.tile = get_config(algo, CUBLASLT_ALGO_CONFIG_TILE_ID);
  f.stages = get_config(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID);
  f.splitk = get_config(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
  f.reduction = get_config(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
  f.swizzle = get_config(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
  f.custom = get_config(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION);
  f.cluster_shape = get_config(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
  f.inner_shape = get_config(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID);
  return f;
}

cublasLtMatmulAlgo_t LtGemm::make_algo(const LtAlgoFields& f) const {
  cublasLtMatmulAlgo_t algo{};
  GT_LT_CALL(cublasLtMatmulAlgoInit(handle_, compute_, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                    f.algo_id, &algo));
  set_config(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, f.tile);
  set_config(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, f.stages);
  set_config(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, f.splitk);
  set_config(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, f.reduction);
  set_config(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, f.swizzle);
  set_config(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, f.custom);
  set_config(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, f.cluster_shape);
  set_config(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, f.inner_shape);
  return algo;
}

std::string LtGemm::check(const cublasLtMatmulAlgo_t& algo, std::size_t max_workspace,
                          std::size_t* workspace_needed) const {
  cublasLtMatmulHeuristicResult_t result{};
  const cublasStatus_t st = cublasLtMatmulAlgoCheck(handle_, desc_.get(), a_layout_.get(), b_layout_.get(),
                                                    d_layout_.get(), d_layout_.get(), &algo, &result);
  if (st != CUBLAS_STATUS_SUCCESS) return std::string("cublasLtMatmulAlgoCheck: ") + cublasLtGetStatusName(st);
  if (workspace_needed) *workspace_needed = result.workspaceSize;
  if (result.workspaceSize > max_workspace)
    return "needs " + std::to_string(result.workspaceSize) + " bytes of workspace, more than " +
           std::to_string(max_workspace);
  return "";
}

std::vector<Candidate> LtGemm::to_candidates(const std::vector<cublasLtMatmulHeuristicResult_t>& results,
                                             int first_rank) const {
  std::vector<Candidate> out;
  int rank = first_rank;
  for (const auto& r : results) {
    if (r.state != CUBLAS_STATUS_SUCCESS) continue;
    Candidate c;
    c.backend = Backend::Lt;
    c.lt = read_algo_fields(r.algo);
    c.heuristic_rank = rank++;
    c.lt_epilogue_kernel = !fused_;
    c.lt_padded = padding_.has_value();
    c.lt_bias_in_gemm = bias_in_gemm_;
    out.push_back(c);
  }
  return out;
}

std::vector<Candidate> LtGemm::heuristic(int top_k, std::size_t max_workspace) const {
  if (top_k < 1) return {};
  const LtPreference pref = make_preference(max_workspace);
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(top_k));
  int returned = 0;
  GT_LT_CALL(cublasLtMatmulAlgoGetHeuristic(handle_, desc_.get(), a_layout_.get(), b_layout_.get(), d_layout_.get(),
                                            d_layout_.get(), pref.get(), top_k, results.data(), &returned));
  results.resize(static_cast<std::size_t>(returned));
  return to_candidates(results, 0);
}

std::vector<Candidate> LtGemm::search_by_algo_id(int per_id, std::size_t max_workspace) const {
  constexpr int kMaxIds = 256;
  std::vector<int> ids(kMaxIds);
  int n_ids = 0;
  GT_LT_CALL(cublasLtMatmulAlgoGetIds(handle_, compute_, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                      kMaxIds, ids.data(), &n_ids));
  const LtPreference pref = make_preference(max_workspace);
  const std::uint32_t mode = CUBLASLT_SEARCH_LIMITED_BY_ALGO_ID;
  GT_LT_CALL(cublasLtMatmulPreferenceSetAttribute(pref.get(), CUBLASLT_MATMUL_PREF_SEARCH_MODE, &mode, sizeof(mode)));

  std::vector<Candidate> out;
  std::set<std::string> seen;
  for (int i = 0; i < n_ids; ++i) {
    cublasLtMatmulHeuristicResult_t seed{};
    GT_LT_CALL(cublasLtMatmulAlgoInit(handle_, compute_, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                      ids[static_cast<std::size_t>(i)], &seed.algo));
    std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(per_id), seed);
    int returned = 0;
    // The algo passed in results[0] names the id to search; an id that cannot run this problem returns an error.
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(handle_, desc_.get(), a_layout_.get(), b_layout_.get(),
                                                             d_layout_.get(), d_layout_.get(), pref.get(), per_id,
                                                             results.data(), &returned);
    if (st != CUBLAS_STATUS_SUCCESS || returned == 0) continue;
    results.resize(static_cast<std::size_t>(returned));
    for (Candidate& c : to_candidates(results, -1)) {
      c.heuristic_rank = -1;
      if (seen.insert(c.id()).second) out.push_back(c);
    }
  }
  return out;
}

void LtGemm::run(const cublasLtMatmulAlgo_t& algo, const GemmOperands& x, void* workspace,
                 std::size_t workspace_bytes, cudaStream_t s, float* padding) const {
  bind_pointers(x);
  // Unfused: the GEMM leaves op(A)·op(B) (+ bias, BiasInGemm) where the epilogue kernel reads it (Z when kept, else
  // Y, in place). Padded: it reads the operands' padded copies (those that have one) and leaves the padded product
  // in the scratch.
  const float* a = x.A;
  const float* b = x.B;
  float* d = fused_ ? x.Y : (problem_.epi.save_z ? x.Z : x.Y);
  std::int64_t d_row_len = 0;  // the epilogue kernel's reading of d: 0 is Y's own rows
  if (padding_) {
    if (!padding) throw InputError("the padded call of " + problem_.key() + " was given no padding scratch");
    const PaddedCall call = padded_call(*padding_, x, padding);
    if (call.n_copies > 0) kernels::copy_rows_padded(call.copies[0], s, call.copies[1]);
    a = call.a;
    b = call.b;
    if (call.d) {
      d = call.d;
      d_row_len = padding_->y.padded_cols;
    }
  }
  const float alpha = 1.0f, beta = 0.0f;
  const void* lt_a = swapped_ ? static_cast<const void*>(b) : static_cast<const void*>(a);
  const void* lt_b = swapped_ ? static_cast<const void*>(a) : static_cast<const void*>(b);
  GT_LT_CALL(cublasLtMatmul(handle_, desc_.get(), &alpha, lt_a, a_layout_.get(), lt_b, b_layout_.get(), &beta, d,
                            d_layout_.get(), d, d_layout_.get(), &algo, workspace, workspace_bytes, s));
  // The product left in Y itself, of a problem with no epilogue, is the result already.
  if (!fused_ && !(d == x.Y && kernel_problem_.epi == Epilogue{}))
    kernels::launch_epilogue(kernel_problem_, d, x, s, d_row_len);
}

}  // namespace gemmtune
