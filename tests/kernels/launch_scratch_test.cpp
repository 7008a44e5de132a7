// Where a variant's launch finds its scratch (kernels/launch_scratch.hpp): split-k partials and a staged variant's
// operand copies, in one region or, as the runtime lends them, the copies in scratch of their own.
#include "kernels/launch_scratch.hpp"

#include <cstdint>

#include <gtest/gtest.h>

#include "kernels/registry.hpp"
#include "support/tuning_fixtures.hpp"

namespace gemmtune::kernels {
namespace {

using test::test_problem;

TEST(LaunchScratch, PartialsComeFirstAndTheCopiesAfterThemAtABoundaryWithinOneRegion) {
  const KernelVariant* v = find_kernel_variant("wgmma_tf32_192x128x32_s4_split2_staged");
  if (!v) GTEST_SKIP() << "this build has no sm_90a code, so no staged wgmma variants";
  const GemmProblem p = test_problem(3463, 261, 2782);
  ASSERT_GT(v->split_k_partial_floats(p), 0u);
  ASSERT_GT(v->staging_floats(p), 0u);
  float* const region = reinterpret_cast<float*>(std::uintptr_t{1} << 20);
  unsigned* const tickets = reinterpret_cast<unsigned*>(std::uintptr_t{1} << 12);
  const LaunchScratch s = place_launch_scratch(*v, p, region, tickets);
  EXPECT_EQ(s.partials, region);
  EXPECT_EQ(s.partial_floats, v->split_k_partial_floats(p));
  EXPECT_EQ(s.staging, region + KernelVariant::staging_offset(s.partial_floats));
  EXPECT_EQ(s.staging_floats, v->staging_floats(p));
  EXPECT_EQ(s.tickets, tickets);
  EXPECT_EQ(s.staging + s.staging_floats, region + v->scratch_floats(p));
}

// The runtime lends a staged plan its copies as it lends a padded cuBLASLt candidate its own (ScratchUse::Padding),
// so that a copy larger than the shared workspace (A at 7677x1023x2995: 92 MB) still runs; the workspace holds the
// partials alone then.
TEST(LaunchScratch, CopiesGivenScratchOfTheirOwnLeaveTheRegionToThePartials) {
  const KernelVariant* v = find_kernel_variant("wgmma_tf32_192x128x32_s4_split2_staged");
  if (!v) GTEST_SKIP() << "this build has no sm_90a code, so no staged wgmma variants";
  const GemmProblem p = test_problem(3463, 261, 2782);
  float* const region = reinterpret_cast<float*>(std::uintptr_t{1} << 20);
  float* const copies = reinterpret_cast<float*>(std::uintptr_t{1} << 30);
  const LaunchScratch s = place_launch_scratch(*v, p, region, nullptr, copies);
  EXPECT_EQ(s.partials, region);
  EXPECT_EQ(s.staging, copies);
  EXPECT_EQ(s.staging_floats, v->staging_floats(p));
  const LaunchScratch unstaged = place_launch_scratch(*v, test_problem(3464, 264, 2784), region, nullptr, copies);
  EXPECT_EQ(unstaged.staging, nullptr) << "aligned operands: nothing is copied, wherever copies would go";
}

}  // namespace
}  // namespace gemmtune::kernels
