// LtGemm: one GemmProblem expressed for cuBLASLt: descriptors, epilogue, compute type, and its candidate algos.
//
// cuBLASLt is column-major; our problems are row-major. A row-major m×n Y is a column-major n×m matrix, so
// Y = A·B is computed as Yᵀ = Bᵀ·Aᵀ: cuBLASLt's "A" is our B, its "B" is our A, its m is our n. Our per-column
// bias is then cuBLASLt's per-row bias (length n), which its BIAS epilogues support. For the transposed store
// (Y kept n×m) we compute the column-major m×n product directly; its bias would run along columns, which cuBLASLt
// cannot broadcast, so those problems use our epilogue kernel after the GEMM.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "lt/lt_handles.hpp"
#include "lt/lt_padding.hpp"
#include "problem/candidate.hpp"
#include "problem/gemm_problem.hpp"

namespace gemmtune {

enum class LtEpilogueMode {
  PreferFused,  // cuBLASLt's own epilogue where it has one; else GEMM + our epilogue kernel
  Unfused,      // always GEMM + our epilogue kernel: the baseline a fused kernel must beat
  Padded,       // the GEMM on operands padded to 16-byte rows, then our epilogue kernel (lt/lt_padding.hpp)
  // cuBLASLt's BIAS epilogue, then our epilogue kernel for the rest: what PyTorch eager runs for gelu(addmm(...)).
  // Its heuristic answers the BIAS epilogue with other algos than the plain GEMM or GELU_BIAS: on the H200's
  // held-out seed 9607, eager's addmm + gelu ran 64x8192x8192 tf32 in 73.0 us where torch.mm alone took 79.9.
  BiasInGemm
};

class LtGemm {
 public:
  // Throws InputError when cuBLASLt cannot run p at all (see unsupported_reason); Padded, where p has nothing to
  // pad or its padding needs more than kMaxPaddingFloats (padding_unsupported_reason); BiasInGemm, where
  // bias_in_gemm_unsupported_reason says why not.
  LtGemm(cublasLtHandle_t handle, const GemmProblem& p, LtEpilogueMode mode = LtEpilogueMode::PreferFused);

  // Empty when cuBLASLt can run p; otherwise why not (it has no 3xtf32 mode; only forward problems).
  static std::string unsupported_reason(const GemmProblem& p);
  // Empty when p can run padded; otherwise why not.
  static std::string padding_unsupported_reason(const GemmProblem& p);
  // Empty when p can run BiasInGemm: a bias, something after it for our kernel, and a row-major output (cuBLASLt's
  // bias runs along D's rows only).
  static std::string bias_in_gemm_unsupported_reason(const GemmProblem& p);

  // True when cuBLASLt computes the whole epilogue; false when our epilogue kernel runs after it.
  bool fused_epilogue() const { return fused_; }
  const GemmProblem& problem() const { return problem_; }
  // The scratch a padded call needs (the copies and the padded output), in floats; 0 unless Padded.
  std::size_t padding_floats() const { return padding_ ? padding_->floats : 0; }

  // The heuristic's first `top_k` algos for this problem, in its order (heuristic_rank 0 = its first choice).
  std::vector<Candidate> heuristic(int top_k, std::size_t max_workspace) const;
  // A wider search: the heuristic asked once per algo id (CUBLASLT_SEARCH_LIMITED_BY_ALGO_ID), up to per_id each.
  // Finds algos the plain heuristic ranks below its top K (DEVICE.md: up to 27% faster at 256³ tf32).
  std::vector<Candidate> search_by_algo_id(int per_id, std::size_t max_workspace) const;

  // Rebuilds an algo from its stored fields (AlgoInit + config attributes), as a cache entry does on load.
  cublasLtMatmulAlgo_t make_algo(const LtAlgoFields& f) const;
  // Empty if `algo` can run this problem within max_workspace (cublasLtMatmulAlgoCheck); else why not.
  std::string check(const cublasLtMatmulAlgo_t& algo, std::size_t max_workspace, std::size_t* workspace_needed) const;

  // Enqueues the GEMM (and our epilogue kernel when not fused; the copies first when padded) on s. No allocation, no
  // synchronization: capturable in a CUDA graph. The workspace must hold what check() reported; `padding`,
  // padding_floats() zeroed once before the first call (lt/lt_padding.hpp), used by one call at a time.
  void run(const cublasLtMatmulAlgo_t& algo, const GemmOperands& x, void* workspace, std::size_t workspace_bytes,
           cudaStream_t s, float* padding = nullptr) const;

  static LtAlgoFields read_algo_fields(const cublasLtMatmulAlgo_t& algo);

 private:
  std::vector<Candidate> to_candidates(const std::vector<cublasLtMatmulHeuristicResult_t>& results, int first_rank) const;
  void bind_pointers(const GemmOperands& x) const;

  cublasLtHandle_t handle_;
  GemmProblem problem_;
  std::optional<LtPadding> padding_;  // Padded: what the GEMM runs on
  bool fused_ = false;
  bool bias_in_gemm_ = false;  // BiasInGemm: cuBLASLt adds the bias, and our kernel runs kernel_problem_'s epilogue
  GemmProblem kernel_problem_;
  bool swapped_ = true;  // row-major output: cuBLASLt computes Yᵀ = Bᵀ·Aᵀ
  cublasComputeType_t compute_;
  LtMatmulDesc desc_;
  LtMatrixLayout a_layout_, b_layout_, d_layout_;
};

}  // namespace gemmtune
