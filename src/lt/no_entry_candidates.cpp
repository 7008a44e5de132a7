#include "lt/no_entry_candidates.hpp"

namespace gemmtune {

std::vector<Candidate> no_entry_challengers(const GemmProblem& gemm, const Candidate& heuristic_first,
                                            const HeuristicFirstOf& first_of) {
  std::vector<Candidate> out;
  if (heuristic_first.backend != Backend::Lt) return out;
  if (!heuristic_first.lt_epilogue_kernel && !(gemm.epi == Epilogue{})) {
    const std::optional<Candidate> unfused = first_of(LtEpilogueMode::Unfused);
    if (unfused && unfused->id() != heuristic_first.id()) out.push_back(*unfused);
  }
  if (LtGemm::padding_unsupported_reason(gemm).empty())
    if (const std::optional<Candidate> padded = first_of(LtEpilogueMode::Padded)) out.push_back(*padded);
  return out;
}

std::optional<NoEntryCandidates> no_entry_candidates(const GemmProblem& gemm, const HeuristicFirstOf& first_of) {
  const std::optional<Candidate> first = first_of(LtEpilogueMode::PreferFused);
  if (!first) return std::nullopt;
  return NoEntryCandidates{*first, no_entry_challengers(gemm, *first, first_of)};
}

HeuristicFirstOf lt_heuristic_first_of(const GemmProblem& gemm, cublasLtHandle_t lt, std::size_t workspace_bytes) {
  return [gemm, lt, workspace_bytes](LtEpilogueMode mode) -> std::optional<Candidate> {
    if (mode == LtEpilogueMode::Padded && !LtGemm::padding_unsupported_reason(gemm).empty()) return std::nullopt;
    const std::vector<Candidate> first = LtGemm(lt, gemm, mode).heuristic(1, workspace_bytes);
    if (first.empty()) return std::nullopt;
    return first.front();
  };
}

}  // namespace gemmtune
