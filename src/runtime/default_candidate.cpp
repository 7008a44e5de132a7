#include "runtime/default_candidate.hpp"

#include "kernels/registry.hpp"
#include "lt/lt_gemm.hpp"
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
    const LtGemm gemm(lt, g, LtEpilogueMode::PreferFused);
    const std::vector<Candidate> first = gemm.heuristic(1, workspace_bytes);
    if (!first.empty())
      return {first[0],
              std::string("cuBLASLt heuristic default (its first algo") +
                  (gemm.fused_epilogue() ? "" : ", then our epilogue kernel") + ")",
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

std::optional<Candidate> unfused_challenger(const GemmProblem& p, const DefaultCandidate& d, cublasLtHandle_t lt,
                                            std::size_t workspace_bytes) {
  const GemmProblem g = pass_gemm(p);
  if (!d.heuristic_first || d.candidate.lt_epilogue_kernel || g.epi == Epilogue{}) return std::nullopt;
  const std::vector<Candidate> first = LtGemm(lt, g, LtEpilogueMode::Unfused).heuristic(1, workspace_bytes);
  if (first.empty()) return std::nullopt;
  return first[0];
}

}  // namespace gemmtune::runtime
