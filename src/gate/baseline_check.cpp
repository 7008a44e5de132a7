#include "gate/baseline_check.hpp"

#include <algorithm>
#include <map>
#include <ostream>

namespace gemmtune {

BaselineCheck check_baseline(const SweepResults& baseline, const PlannedKeys& plan) {
  BaselineCheck check;
  check.source = baseline.source;
  check.gpu = baseline.device_key.substr(0, baseline.device_key.find('|'));
  check.baseline_profile = baseline.profile;
  check.plan_profile = plan.profile;

  // Every record of the baseline, whatever its status: the sweep writes one per planned own candidate (an own
  // candidate that failed is still one this build runs), so presence is what tells a current baseline.
  std::map<std::string, std::set<std::string>> own_by_problem;  // problem key -> own candidate ids
  std::vector<std::string> baseline_problems;                    // in the baseline's order
  for (const CaseTiming& c : baseline.cases) {
    if (own_by_problem.count(c.problem_key) == 0) baseline_problems.push_back(c.problem_key);
    std::set<std::string>& own = own_by_problem[c.problem_key];
    if (c.candidate.backend == Backend::Own) own.insert(c.candidate.id());
  }

  // A device-limited family ran on the baseline's GPU when the baseline holds any of its planned candidates.
  for (const PlannedProblemKeys& p : plan.problems) {
    const auto recorded = own_by_problem.find(p.problem_key);
    for (const DeviceDependentCandidate& d : p.own_device_dependent) {
      bool& ran = check.device_limits_ran[d.limit];
      ran = ran || (recorded != own_by_problem.end() && recorded->second.count(d.id) != 0);
    }
  }
  // What the baseline's GPU would plan: this machine's plan, plus the families the baseline shows its GPU ran.
  std::map<std::string, std::vector<std::string>> expected;
  for (const PlannedProblemKeys& p : plan.problems) {
    std::vector<std::string>& want = expected[p.problem_key];
    want = p.own_candidates;
    for (const DeviceDependentCandidate& d : p.own_device_dependent)
      if (check.device_limits_ran[d.limit]) want.push_back(d.id);
  }

  for (const std::string& problem : baseline_problems) {
    const auto it = expected.find(problem);
    if (it == expected.end()) {
      check.stale.push_back({problem, "problem not in the '" + plan.profile + "' profile's plan"});
      continue;
    }
    const std::vector<std::string>& want = it->second;
    for (const std::string& id : own_by_problem[problem]) {
      if (std::find(want.begin(), want.end(), id) != want.end()) continue;
      const std::string variant = id.substr(id.find('/') + 1);
      check.stale.push_back({problem + "/" + id, plan.own_variants_in_build.count(variant) == 0
                                                     ? "no kernel variant of that name in this build"
                                                     : "this build does not plan that variant for this problem"});
    }
  }
  for (const PlannedProblemKeys& p : plan.problems) {
    const auto it = own_by_problem.find(p.problem_key);
    if (it == own_by_problem.end()) {
      check.missing.push_back({p.problem_key, "planned problem has no record in the baseline"});
      continue;
    }
    ++check.problems_checked;
    for (const std::string& id : expected[p.problem_key]) {
      ++check.own_candidates_checked;
      if (it->second.count(id) == 0)
        check.missing.push_back({p.problem_key + "/" + id, "planned own candidate has no record in the baseline"});
    }
  }
  return check;
}

void write_baseline_check(std::ostream& out, const BaselineCheck& check) {
  if (check.ok()) {
    out << "baseline check: " << check.source << " is current: its " << check.problems_checked << " problems and "
        << check.own_candidates_checked << " own-kernel candidates are what this build plans for profile '"
        << check.plan_profile << "' (cuBLASLt candidates are checked on the GPU, by the gate)\n";
  } else {
    out << "baseline check: " << check.source << " is STALE for this build's '" << check.plan_profile << "' plan: "
        << check.stale.size() << " stale (in the baseline, not in the plan), " << check.missing.size()
        << " missing (in the plan, not in the baseline)\n";
    if (check.baseline_profile != check.plan_profile)
      out << "  the baseline is a '" << check.baseline_profile << "'-profile sweep; the CI job sweeps '"
          << check.plan_profile << "'\n";
    for (const BaselineFinding& f : check.stale) out << "  stale:   " << f.key << ": " << f.why << "\n";
    for (const BaselineFinding& f : check.missing) out << "  missing: " << f.key << ": " << f.why << "\n";
  }
  for (const auto& [limit, ran] : check.device_limits_ran)
    out << "  a family this machine cannot run (" << limit << "): "
        << (ran ? "the baseline's GPU ran it, so each of its planned variants was checked"
                : "the baseline's GPU did not run it (no record of it), so none was expected")
        << "\n";
  if (!check.ok())
    out << "fix: on the GPU this baseline is for (" << check.gpu << "), with this commit built in build/, run\n"
        << "  scripts/record_baseline.sh\n"
        << "and commit the " << check.source << " it writes (README: \"Baselines and the CI job\")\n";
}

}  // namespace gemmtune
