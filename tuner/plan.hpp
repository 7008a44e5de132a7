// SweepPlan: which problems a sweep measures and which candidates each one gets, before anything runs.
// Our variants are known at build time; cuBLASLt's are what its heuristic answers on the GPU, so the plan
// lists them as a search to be made. `sweep --dry-run` prints the plan and needs no GPU.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "problem/gemm_problem.hpp"
#include "profile/sweep_profile.hpp"

namespace gemmtune {

struct PlannedProblem {
  GemmProblem problem;
  std::vector<std::string> own_variants;          // registry variants that can run it
  // Of own_variants, the 3xtf32 ones an fp32 problem tries under the fp32-equivalent policy (problem/fp32_equivalent.hpp)
  std::vector<std::string> fp32_equivalent_variants;
  std::vector<std::string> own_skipped;           // "name: why" for variants of its mode that cannot
  std::string lt_search;                          // what cuBLASLt is asked, or "" when the lt backend is off
  std::string lt_unsupported;                     // why cuBLASLt cannot run it at all, if so
};

struct SweepPlan {
  std::string profile;
  std::vector<PlannedProblem> problems;
};

// Filters the profile's problems by mode and backend (empty lists keep the profile's) and plans each one.
SweepPlan make_sweep_plan(const SweepProfile& profile, const std::vector<MathMode>& modes,
                          const std::vector<std::string>& backends);

void print_sweep_plan(const SweepPlan& plan, const SweepProfile& profile, std::ostream& out);

}  // namespace gemmtune
