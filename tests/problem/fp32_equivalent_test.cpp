// The fp32-equivalent policy's admission rule: within the fp32 bound AND within 2x cuBLASLt fp32's error, and only
// when the policy is on.
#include "problem/fp32_equivalent.hpp"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace gemmtune {
namespace {

constexpr double kBound = 6.4e-5;  // 1e-6·√4096

TEST(Fp32Equivalent, ACandidateWithinTheBoundAndTwiceCublasLtFp32IsAdmitted) {
  const Fp32EquivalentVerdict v = admit_fp32_equivalent(true, 7.9e-7, kBound, 4e-7);
  EXPECT_TRUE(v.admitted) << v.reason;
  EXPECT_NE(v.reason.find("admitted"), std::string::npos) << v.reason;
}

TEST(Fp32Equivalent, ACandidateAboveTwiceCublasLtFp32IsRefusedThoughItPassesTheVerifier) {
  // The 3xtf32 of before the promotion fix: 2.7e-5 at k = 4096, under the verifier's 6.4e-5, 70x cuBLASLt fp32.
  const Fp32EquivalentVerdict v = admit_fp32_equivalent(true, 2.7e-5, kBound, 4e-7);
  EXPECT_FALSE(v.admitted);
  EXPECT_NE(v.reason.find("2x cuBLASLt fp32"), std::string::npos) << v.reason;
  EXPECT_FALSE(admit_fp32_equivalent(true, 8.1e-7, kBound, 4e-7).admitted) << "just above 2x";
}

TEST(Fp32Equivalent, ACandidateAboveTheFp32BoundIsRefusedEvenWhenCublasLtIsAsBad) {
  const Fp32EquivalentVerdict v = admit_fp32_equivalent(true, 1e-4, kBound, 1e-4);
  EXPECT_FALSE(v.admitted);
  EXPECT_NE(v.reason.find("fp32 bound"), std::string::npos) << v.reason;
  EXPECT_FALSE(admit_fp32_equivalent(true, std::numeric_limits<double>::infinity(), kBound, 4e-7).admitted);
  EXPECT_FALSE(admit_fp32_equivalent(true, std::nan(""), kBound, 4e-7).admitted);
}

TEST(Fp32Equivalent, NothingIsAdmittedWhenThePolicyIsOffOrCublasLtFp32WasNotMeasured) {
  const Fp32EquivalentVerdict off = admit_fp32_equivalent(false, 1e-7, kBound, 4e-7);
  EXPECT_FALSE(off.admitted);
  EXPECT_NE(off.reason.find("off"), std::string::npos) << off.reason;
  EXPECT_FALSE(admit_fp32_equivalent(true, 1e-7, kBound, -1).admitted);
}

TEST(Fp32Equivalent, OnlyA3xtf32VariantOnAnFp32ProblemNeedsThePolicy) {
  GemmProblem p;
  p.m = p.n = p.k = 64;
  p.mode = MathMode::Fp32;
  EXPECT_TRUE(needs_fp32_equivalent_policy(p, MathMode::Tf32x3));
  EXPECT_FALSE(needs_fp32_equivalent_policy(p, MathMode::Tf32)) << "tf32 is never fp32-equivalent";
  EXPECT_FALSE(needs_fp32_equivalent_policy(p, MathMode::Fp32));
  p.mode = MathMode::Tf32x3;
  EXPECT_FALSE(needs_fp32_equivalent_policy(p, MathMode::Tf32x3));
}

}  // namespace
}  // namespace gemmtune
