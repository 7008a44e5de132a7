// Is a committed baseline still what this build would measure? The CPU side of keeping baselines current: compares
// the baseline's problems and own-kernel candidates with the plan of the profile the CI job sweeps. cuBLASLt's
// candidates are what its heuristic answers on the GPU, so they are not checked here: on the GPU a changed answer
// shows up in the gate itself (new cases, or missing ones: exit 2).
// Own variants whose family has a device limit (wgmma needs sm_90) are planned only on a GPU that meets it. Where the
// check runs without such a GPU (CPU CI), the baseline says whether its GPU ran the family: records of any variant
// of the family mean it did, and then every planned variant of that family must be there; none means it did not.
#pragma once

#include <iosfwd>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gate/sweep_results.hpp"

namespace gemmtune {

// What a build plans for a profile, as record keys (tuner/plan_keys.hpp makes it from a SweepPlan).
struct DeviceDependentCandidate {
  std::string id;     // "own/<variant>"
  std::string limit;  // why this machine cannot run it: the family's device limit, the same text for the whole family
};
struct PlannedProblemKeys {
  std::string problem_key;
  std::vector<std::string> own_candidates;  // candidate ids, "own/<variant>": one record each in the sweep
  // Candidates the problem allows but this machine's GPU (or its lack of one) does not: planned on a GPU that
  // meets their family's device limit (wgmma: sm_90), not here.
  std::vector<DeviceDependentCandidate> own_device_dependent;
};
struct PlannedKeys {
  std::string profile;
  std::vector<PlannedProblemKeys> problems;
  std::set<std::string> own_variants_in_build;  // the registry's names, to say why a stale candidate is stale
};

struct BaselineFinding {
  std::string key;  // a problem key, or a record key "<problem key>/own/<variant>"
  std::string why;
};

struct BaselineCheck {
  std::string source;            // the baseline file
  std::string gpu;               // its device's name, for the fix command
  std::string baseline_profile, plan_profile;
  std::vector<BaselineFinding> stale;    // in the baseline, not in the plan
  std::vector<BaselineFinding> missing;  // in the plan, not in the baseline
  int problems_checked = 0, own_candidates_checked = 0;
  // Device limits of families this machine cannot run: "ran" when the baseline holds records of the family (its GPU
  // ran them, so every planned one must be there), else absent (its GPU did not, so none may be).
  std::map<std::string, bool> device_limits_ran;
  bool ok() const { return baseline_profile == plan_profile && stale.empty() && missing.empty(); }
};

BaselineCheck check_baseline(const SweepResults& baseline, const PlannedKeys& plan);

// The verdict, every stale and missing entry, and on failure the command that records a current baseline.
void write_baseline_check(std::ostream& out, const BaselineCheck& check);

}  // namespace gemmtune
