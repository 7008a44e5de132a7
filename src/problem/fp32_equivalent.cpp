#include "problem/fp32_equivalent.hpp"

#include <cmath>
#include <cstdio>

namespace gemmtune {
namespace {

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

}  // namespace

bool needs_fp32_equivalent_policy(const GemmProblem& p, MathMode variant_mode) {
  return p.mode == MathMode::Fp32 && variant_mode == MathMode::Tf32x3;
}

Fp32EquivalentVerdict admit_fp32_equivalent(bool policy_on, double error, double fp32_bound, double lt_fp32_error) {
  if (!policy_on) return {false, "the fp32-equivalent policy is off"};
  if (lt_fp32_error < 0) return {false, "fp32-equivalent policy: no cuBLASLt fp32 error to compare with"};
  const double limit = kFp32EquivalentErrorRatio * lt_fp32_error;
  const std::string numbers = "error " + sci(error) + ", fp32 bound " + sci(fp32_bound) + ", cuBLASLt fp32 " +
                              sci(lt_fp32_error);
  if (!std::isfinite(error) || error > fp32_bound)
    return {false, "fp32-equivalent policy refused: " + numbers + " (above the fp32 bound)"};
  if (error > limit)
    return {false, "fp32-equivalent policy refused: " + numbers + " (above " + sci(kFp32EquivalentErrorRatio) +
                       "x cuBLASLt fp32's)"};
  return {true, "admitted by the fp32-equivalent policy: " + numbers};
}

}  // namespace gemmtune
