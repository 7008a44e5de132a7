// Which own candidates a sweep plans for a problem, on this machine or on one that meets a family's device limit
// (tuner/plan_keys.hpp): the keys the baseline check expects a sweep to have measured.
#include "tuner/plan_keys.hpp"

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "kernels/registry.hpp"
#include "profile/sweep_profile.hpp"
#include "support/tuning_fixtures.hpp"
#include "tuner/plan.hpp"

namespace gemmtune {
namespace {

// A staged variant's copies are scratch of its own, as a padded cuBLASLt candidate's are, not the workspace's: at
// 7677x1023x2995 the copy of A is 92 MB, more than the 64 MiB workspace, and the staged variants used to be refused
// there, leaving the problem to +pad cuBLASLt (218 us on an H200, where the aligned twin ran 134).
TEST(PlanKeys, AStagedVariantWhoseCopiesExceedTheWorkspaceIsStillPlanned) {
  const std::string staged = "wgmma_tf32_256x128x32_s4_staged";
  const kernels::KernelVariant* v = kernels::find_kernel_variant(staged);
  if (!v) GTEST_SKIP() << "this build has no sm_90a code, so no staged wgmma variants";
  const SweepProfile profile = parse_sweep_profile(
      R"({"name": "staging_scratch", "shapes": [[7677, 1023, 2995]], "epilogues": ["bias+gelu"],
          "lt": {"workspace_mib": 64}})",
      "test");
  ASSERT_GT(v->staging_floats(test::test_problem(7677, 1023, 2995)) * sizeof(float), profile.lt.workspace_bytes);
  const PlannedKeys keys = planned_keys(make_sweep_plan(profile, {}, {}), profile.lt.workspace_bytes);
  ASSERT_EQ(keys.problems.size(), 1u);
  const PlannedProblemKeys& planned = keys.problems.front();
  const std::string id = "own/" + staged;
  const bool here = std::find(planned.own_candidates.begin(), planned.own_candidates.end(), id) !=
                    planned.own_candidates.end();
  const bool on_an_sm90 =
      std::any_of(planned.own_device_dependent.begin(), planned.own_device_dependent.end(),
                  [&](const DeviceDependentCandidate& d) { return d.id == id; });
  EXPECT_TRUE(here || on_an_sm90) << id << " is not planned for " << planned.problem_key;
}

}  // namespace
}  // namespace gemmtune
