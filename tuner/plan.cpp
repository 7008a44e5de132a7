#include "tuner/plan.hpp"

#include <algorithm>
#include <ostream>

#include "kernels/registry.hpp"
#include "launch/candidate_launcher.hpp"
#include "lt/lt_gemm.hpp"
#include "problem/fp32_equivalent.hpp"
#include "problem/pass_gemm.hpp"

namespace gemmtune {
namespace {

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

std::string lt_search_text(const LtSearchSettings& lt) {
  std::string s = "heuristic top-" + std::to_string(lt.top_k);
  if (lt.by_algo_id) s += " + per-algo-id search (" + std::to_string(lt.per_algo_id) + " each)";
  if (lt.unfused_baseline) s += " + unfused GEMM→epilogue-kernel and bias-in-GEMM baselines";
  return s + ", " + std::to_string(lt.workspace_bytes >> 20) + " MiB workspace";
}

}  // namespace

SweepPlan make_sweep_plan(const SweepProfile& profile, const std::vector<MathMode>& modes,
                          const std::vector<std::string>& backends) {
  const std::vector<std::string>& use_backends = backends.empty() ? profile.backends : backends;
  SweepPlan plan;
  plan.profile = profile.name;
  for (const GemmProblem& p : profile.problems) {
    if (!modes.empty() && std::find(modes.begin(), modes.end(), p.mode) == modes.end()) continue;
    PlannedProblem pp;
    pp.problem = p;
    const GemmProblem gemm = pass_gemm(p);  // a backward pass is tuned as the plain GEMM it runs
    if (has(use_backends, "own")) {
      for (const kernels::KernelVariant& v : kernels::kernel_registry()) {
        const bool by_policy = profile.fp32_equivalent && needs_fp32_equivalent_policy(p, v.mode);
        if (v.mode != p.mode && !by_policy) continue;
        // The sweep's own check (split-k scratch against the workspace included); ours needs no cuBLASLt handle.
        Candidate c;
        c.backend = Backend::Own;
        c.own_variant = v.name;
        const std::string why = CandidateLauncher::unsupported_reason(p, c, nullptr, profile.lt.workspace_bytes);
        if (why.empty()) {
          pp.own_variants.push_back(v.name);
          if (by_policy) pp.fp32_equivalent_variants.push_back(v.name);
        } else
          pp.own_skipped.push_back(v.name + ": " + why);
      }
    }
    if (has(use_backends, "lt")) {
      pp.lt_unsupported = LtGemm::unsupported_reason(gemm);
      if (pp.lt_unsupported.empty()) pp.lt_search = lt_search_text(profile.lt);
    }
    plan.problems.push_back(std::move(pp));
  }
  return plan;
}

void print_sweep_plan(const SweepPlan& plan, const SweepProfile& profile, std::ostream& out) {
  std::size_t own_total = 0;
  for (const PlannedProblem& pp : plan.problems) own_total += pp.own_variants.size();
  out << "plan for profile '" << plan.profile << "': " << plan.problems.size() << " problems, " << own_total
      << " own-kernel candidates, cuBLASLt: " << lt_search_text(profile.lt) << " per problem (resolved on the GPU)\n";
  std::size_t i = 0;
  for (const PlannedProblem& pp : plan.problems) {
    out << "[" << ++i << "/" << plan.problems.size() << "] " << pp.problem.key() << "\n";
    if (!pp.own_variants.empty()) {
      out << "    own (" << pp.own_variants.size() << "):";
      for (const std::string& v : pp.own_variants) out << " " << v;
      out << "\n";
    }
    if (!pp.fp32_equivalent_variants.empty())
      out << "    of which 3xtf32 under the fp32-equivalent policy (admitted only within 2x cuBLASLt fp32's error): "
          << pp.fp32_equivalent_variants.size() << "\n";
    for (const std::string& s : pp.own_skipped) out << "    own skipped: " << s << "\n";
    if (!pp.lt_search.empty()) out << "    lt: " << pp.lt_search << "\n";
    if (!pp.lt_unsupported.empty()) out << "    lt skipped: " << pp.lt_unsupported << "\n";
  }
}

}  // namespace gemmtune
