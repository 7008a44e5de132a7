// The fp32-equivalent policy in a real sweep: an fp32 problem's 3xtf32 candidates are verified against cuBLASLt fp32's
// error in the same verification, and each one is either admitted (timed, cacheable, flagged) or refused with the
// numbers; without the policy they are not candidates at all.
#include <gtest/gtest.h>

#include "kernels/registry.hpp"
#include "profile/sweep_profile.hpp"
#include "support/gpu_test.hpp"
#include "tuner/plan.hpp"
#include "tuner/sweep.hpp"

namespace gemmtune {
namespace {

constexpr const char* kProfile = R"({
  "name": "fp32-equivalent-test", "shapes": [[1000, 1024, 4096]], "epilogues": ["bias+gelu"], "modes": ["fp32"],
  "backends": ["own", "lt"], "lt": {"top_k": 1},
  "timing": {"min_samples": 5, "min_time_ms": 1, "max_time_ms": 20, "max_noise_pct": 100}})";

SweepResult sweep(bool policy) {
  SweepProfile profile = parse_sweep_profile(kProfile, "fp32-equivalent-test.json");
  profile.fp32_equivalent = policy;
  SweepOptions options;
  options.quiet = true;
  return run_sweep(make_sweep_plan(profile, {}, {}), profile, options);
}

// By the registry's mode, not the name: both the mma.sync ("3xtf32_...") and wgmma ("wgmma_3xtf32_...") families.
bool is_3xtf32(const MeasurementRecord& r) {
  if (r.candidate.backend != Backend::Own) return false;
  const kernels::KernelVariant* v = kernels::find_kernel_variant(r.candidate.own_variant);
  return v != nullptr && v->mode == MathMode::Tf32x3;
}

TEST(SweepFp32Equivalent, Every3xtf32CandidateOfAnFp32ProblemIsAdmittedWithinTwiceCublasLtFp32) {
  GT_REQUIRE_GPU();
  const SweepResult result = sweep(true);
  ASSERT_EQ(result.problems.size(), 1u);
  int admitted = 0;
  for (const MeasurementRecord& r : result.problems[0].records) {
    EXPECT_EQ(r.problem.mode, MathMode::Fp32) << "the problem key stays fp32";
    if (!is_3xtf32(r)) {
      EXPECT_FALSE(r.fp32_equivalent) << r.candidate.id();
      continue;
    }
    // With the promotion into FADD, every 3xtf32 variant is fp32-accurate at k = 4096: none may be refused.
    EXPECT_EQ(r.status, MeasureStatus::Ok) << r.candidate.id() << ": " << r.message;
    EXPECT_TRUE(r.fp32_equivalent) << r.candidate.id();
    EXPECT_GT(r.stats.median_us, 0) << r.candidate.id();
    admitted += r.fp32_equivalent ? 1 : 0;
  }
  EXPECT_GT(admitted, 0);
  EXPECT_EQ(result.verify_failures, 0);
}

TEST(SweepFp32Equivalent, WithoutThePolicyAnFp32ProblemHasNo3xtf32Candidate) {
  GT_REQUIRE_GPU();
  const SweepResult result = sweep(false);
  ASSERT_EQ(result.problems.size(), 1u);
  int own = 0;
  for (const MeasurementRecord& r : result.problems[0].records) {
    EXPECT_FALSE(is_3xtf32(r)) << r.candidate.id();
    EXPECT_FALSE(r.fp32_equivalent) << r.candidate.id();
    own += r.candidate.backend == Backend::Own ? 1 : 0;
  }
  EXPECT_GT(own, 0) << "no own candidate at all: the absence of 3xtf32 ones would prove nothing";
}

}  // namespace
}  // namespace gemmtune
