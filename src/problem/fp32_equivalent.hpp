// The fp32-equivalent policy (opt-in, as cuBLAS's own fp32 emulation is): an fp32 problem may run one of our 3xtf32
// variants, but only where that variant's error, measured on that problem against the fp64 reference, is within the
// fp32 bound and within kFp32EquivalentErrorRatio of cuBLASLt fp32's error in the same verification. The problem key
// stays fp32 and the candidate id names the 3xtf32 variant; the cache entry records that the policy admitted it, and
// the runtime takes such entries only when RuntimeOptions::fp32_equivalent allows it.
#pragma once

#include <string>

#include "problem/gemm_problem.hpp"

namespace gemmtune {

// How far above cuBLASLt fp32's error an admitted candidate's may be.
constexpr double kFp32EquivalentErrorRatio = 2.0;

// True when a variant of variant_mode runs problem p only through the policy: p is fp32 and the variant 3xtf32.
bool needs_fp32_equivalent_policy(const GemmProblem& p, MathMode variant_mode);

struct Fp32EquivalentVerdict {
  bool admitted = false;
  std::string reason;  // why it was admitted or refused, with the numbers
};

// policy_on: the profile's "fp32_equivalent" or `sweep --fp32-equivalent`. error: the candidate's relative error;
// fp32_bound: the fp32 tolerance of the problem (1e-6·√k); lt_fp32_error: cuBLASLt fp32's on the same inputs, or
// negative when it could not be measured (then nothing is admitted).
Fp32EquivalentVerdict admit_fp32_equivalent(bool policy_on, double error, double fp32_bound, double lt_fp32_error);

}  // namespace gemmtune
