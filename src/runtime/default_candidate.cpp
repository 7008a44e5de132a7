#include "runtime/default_candidate.hpp"

#include "kernels/registry.hpp"
#include "lt/lt_gemm.hpp"
#include "lt/no_entry_candidates.hpp"
#include "problem/pass_gemm.hpp"

namespace gemmtune::runtime {
namespace {

std::int64_t tiles_of(const GemmProblem& g, const kernels::TileConfig& t) {
  return ((g.m + t.bm - 1) / t.bm) * ((g.n + t.bn - 1) / t.bn);
}

// Without measurements: the variant with the largest block tile that still gives every SM a tile (a larger tile
// reuses each loaded operand more); if none fills the GPU, the one that comes closest (most tiles).
const kernels::KernelVariant* best_guess_variant(const GemmProblem& g, int sm_count) {
  const auto area = [](const kernels::KernelVariant& v) { return std::int64_t{v.tile.bm} * v.tile.bn; };
  const auto better = [&](const kernels::KernelVariant& a, const kernels::KernelVariant& b) {
    const bool a_fills = tiles_of(g, a.tile) >= sm_count, b_fills = tiles_of(g, b.tile) >= sm_count;
    if (a_fills != b_fills) return a_fills;
    return a_fills ? area(a) > area(b) : tiles_of(g, a.tile) > tiles_of(g, b.tile);
  };
  const kernels::KernelVariant* best = nullptr;
  for (const kernels::KernelVariant& v : kernels::kernel_registry())
    if (v.mode == g.mode && v.unsupported_reason(g).empty() && (!best || better(v, *best))) best = &v;
  return best ? &kernels::alignment_twin(*best, g) : nullptr;  // the copy engine's pipeline where it needs staging
}

}  // namespace

DefaultCandidate default_candidate(const GemmProblem& p, cublasLtHandle_t lt, std::size_t workspace_bytes,
                                   int sm_count) {
  const GemmProblem g = pass_gemm(p);
  const std::string lt_why = LtGemm::unsupported_reason(g);
  if (lt_why.empty()) {
    const std::optional<Candidate> first = lt_heuristic_first_of(g, lt)(LtEpilogueMode::PreferFused, workspace_bytes);
    if (first)
      return {*first,
              std::string("cuBLASLt heuristic default (its first algo") +
                  (first->lt_epilogue_kernel ? ", then our epilogue kernel" : "") + ")",
              true};
  }
  if (const kernels::KernelVariant* v = best_guess_variant(g, sm_count)) {
    Candidate c;
    c.backend = Backend::Own;
    c.own_variant = v->name;
    return {c, "best-guess own variant (largest tile that fills the GPU; " +
                   (lt_why.empty() ? std::string("cuBLASLt's heuristic returned nothing") : lt_why) + ")"};
  }
  throw CheckError("no candidate can run " + p.key() + (lt_why.empty() ? "" : ": " + lt_why) +
                   ", and no kernel variant of this build supports it");
}

}  // namespace gemmtune::runtime
