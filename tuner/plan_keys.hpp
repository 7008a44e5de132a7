// The record keys a sweep of a plan writes for our own kernels (one per planned own candidate, whatever its
// outcome), for the baseline check (gate/baseline_check.hpp), which lives below the tuner and so takes plain keys.
#pragma once

#include <cstddef>

#include "gate/baseline_check.hpp"
#include "tuner/plan.hpp"

namespace gemmtune {

// workspace_bytes: the profile's cuBLASLt workspace, which also bounds our split-k scratch (as in the plan).
PlannedKeys planned_keys(const SweepPlan& plan, std::size_t workspace_bytes);

}  // namespace gemmtune
