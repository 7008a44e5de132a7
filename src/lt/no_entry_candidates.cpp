#include "lt/no_entry_candidates.hpp"

#include <algorithm>

#include "lt/blas_gemm.hpp"

namespace gemmtune {

std::vector<Candidate> no_entry_challengers(const GemmProblem& gemm, const Candidate& heuristic_first,
                                            const HeuristicFirstOf& first_of, std::size_t workspace_bytes) {
  std::vector<Candidate> out;
  if (heuristic_first.backend != Backend::Lt) return out;
  const auto add_new = [&](const std::optional<Candidate>& c) {
    if (!c || c->id() == heuristic_first.id()) return;
    if (std::none_of(out.begin(), out.end(), [&](const Candidate& o) { return o.id() == c->id(); })) out.push_back(*c);
  };
  const bool can_unfuse = !heuristic_first.lt_epilogue_kernel && !(gemm.epi == Epilogue{});
  const bool can_split_bias = LtGemm::bias_in_gemm_unsupported_reason(gemm).empty();
  if (can_unfuse) add_new(first_of(LtEpilogueMode::Unfused, workspace_bytes));
  if (can_split_bias) add_new(first_of(LtEpilogueMode::BiasInGemm, workspace_bytes));
  if (LtGemm::padding_unsupported_reason(gemm).empty()) add_new(first_of(LtEpilogueMode::Padded, workspace_bytes));
  for (const std::size_t w : kFrameworkWorkspaces) {
    if (w >= workspace_bytes) continue;
    add_new(first_of(LtEpilogueMode::PreferFused, w));
    if (can_unfuse) add_new(first_of(LtEpilogueMode::Unfused, w));
    if (can_split_bias) add_new(first_of(LtEpilogueMode::BiasInGemm, w));
  }
  if (BlasGemm::unsupported_reason(gemm).empty()) {
    Candidate blas;
    blas.backend = Backend::Blas;
    out.push_back(blas);
  }
  return out;
}

std::optional<NoEntryCandidates> no_entry_candidates(const GemmProblem& gemm, const HeuristicFirstOf& first_of,
                                                     std::size_t workspace_bytes) {
  const std::optional<Candidate> first = first_of(LtEpilogueMode::PreferFused, workspace_bytes);
  if (!first) return std::nullopt;
  return NoEntryCandidates{*first, no_entry_challengers(gemm, *first, first_of, workspace_bytes)};
}

std::optional<Candidate> eager_call(const GemmProblem& gemm, const HeuristicFirstOf& first_of,
                                    std::size_t workspace_bytes) {
  const bool lt_addmm = gemm.epi.bias && gemm.m > 1 && gemm.n > 1 && gemm.k > 1 && gemm.out == OutputLayout::RowMajor;
  if (lt_addmm) {
    const LtEpilogueMode mode = LtGemm::bias_in_gemm_unsupported_reason(gemm).empty() ? LtEpilogueMode::BiasInGemm
                                                                                     : LtEpilogueMode::PreferFused;
    return first_of(mode, std::min(kTorchLtWorkspace, workspace_bytes));
  }
  if (!BlasGemm::unsupported_reason(gemm).empty()) return std::nullopt;
  Candidate blas;
  blas.backend = Backend::Blas;
  return blas;
}

std::string no_entry_challenger_kind(const Candidate& c) {
  if (c.backend == Backend::Blas) return "cuBLAS's own choice, as torch.mm calls it, then our epilogue kernel";
  if (c.lt_padded) return "the GEMM on copies padded to 16-byte rows, then our epilogue kernel";
  if (c.lt_bias_in_gemm)
    return "the GEMM with cuBLASLt's bias, then our kernel for the rest, as PyTorch's addmm + activation";
  if (c.lt_epilogue_kernel) return "the plain GEMM, then our epilogue kernel";
  return "the heuristic's first algo at a framework's smaller workspace";
}

HeuristicFirstOf lt_heuristic_first_of(const GemmProblem& gemm, cublasLtHandle_t lt) {
  return [gemm, lt](LtEpilogueMode mode, std::size_t max_workspace) -> std::optional<Candidate> {
    if (mode == LtEpilogueMode::Padded && !LtGemm::padding_unsupported_reason(gemm).empty()) return std::nullopt;
    if (mode == LtEpilogueMode::BiasInGemm && !LtGemm::bias_in_gemm_unsupported_reason(gemm).empty())
      return std::nullopt;
    const std::vector<Candidate> first = LtGemm(lt, gemm, mode).heuristic(1, max_workspace);
    if (first.empty()) return std::nullopt;
    return first.front();
  };
}

}  // namespace gemmtune
