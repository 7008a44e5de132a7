#include "tuner/plan_keys.hpp"

#include <algorithm>

#include "kernels/registry.hpp"
#include "problem/candidate.hpp"
#include "problem/pass_gemm.hpp"

namespace gemmtune {
namespace {

std::string own_id(const std::string& variant) {
  Candidate c;
  c.backend = Backend::Own;
  c.own_variant = variant;
  return c.id();
}

// Whether the variant could run the problem on a GPU that meets its family's device limit: the checks of
// CandidateLauncher::unsupported_reason (the variant's own, then its split-k scratch against the workspace) with the
// device limit taken away.
bool runs_but_for_the_device(const kernels::KernelVariant& v, const GemmProblem& p, std::size_t workspace_bytes) {
  kernels::KernelVariant any_device = v;
  any_device.limits.device = nullptr;
  const GemmProblem g = pass_gemm(p);
  return any_device.unsupported_reason(g).empty() &&
         any_device.split_k_partial_floats(g) * sizeof(float) <= workspace_bytes;
}

}  // namespace

PlannedKeys planned_keys(const SweepPlan& plan, std::size_t workspace_bytes) {
  PlannedKeys keys;
  keys.profile = plan.profile;
  for (const PlannedProblem& pp : plan.problems) {
    PlannedProblemKeys p;
    p.problem_key = pp.problem.key();
    for (const std::string& variant : pp.own_variants) p.own_candidates.push_back(own_id(variant));
    if (!pp.own_variants.empty() || !pp.own_skipped.empty()) {  // the own backend is on
      for (const kernels::KernelVariant& v : kernels::kernel_registry()) {
        if (v.mode != pp.problem.mode) continue;
        if (std::find(pp.own_variants.begin(), pp.own_variants.end(), v.name) != pp.own_variants.end()) continue;
        const std::string device_limit = v.device_unsupported_reason();
        if (!device_limit.empty() && runs_but_for_the_device(v, pp.problem, workspace_bytes))
          p.own_device_dependent.push_back({own_id(v.name), device_limit});
      }
    }
    keys.problems.push_back(std::move(p));
  }
  for (const kernels::KernelVariant& v : kernels::kernel_registry()) keys.own_variants_in_build.insert(v.name);
  return keys;
}

}  // namespace gemmtune
