// Why 3xtf32's error grew with k, and why its outputs came out scaled down, shown on a CPU model of its summation
// (kernels/tensor_core_model.hpp), and that the promotion in kernels/split3x_promotion.cuh removes both. The H100 measured, before the fix, relative Frobenius
// errors of 7e-6 at k = 1001, 1.4e-5 at 2049 and 2.7e-5 at 4096 (uniform inputs): linear in k.
#include <cmath>
#include <cstdio>
#include <random>

#include <gtest/gtest.h>

#include "kernels/tensor_core_model.hpp"

namespace gemmtune::test {
namespace {

constexpr int kDots = 48;  // independent dot products per error: enough for a stable Frobenius ratio, fast on a CPU

double split_error(int k, SplitDotModel model, InputDistribution dist = InputDistribution::Uniform) {
  const double error = relative_dot_error(k, kDots, dist, 7, [model](const auto& a, const auto& b) {
    return split_tf32_dot(a, b, model);
  });
  std::printf("  3xtf32 model (accumulation %d, promote every %d k8 steps) k=%5d dist=%d: %.2e\n",
              static_cast<int>(model.accumulation), model.promote_every_k8_steps, k, static_cast<int>(dist), error);
  return error;
}

double ffma_error(int k, InputDistribution dist = InputDistribution::Uniform) {
  const double error = relative_dot_error(k, kDots, dist, 7, ffma_dot);
  std::printf("  sequential FFMA                                     k=%5d dist=%d: %.2e\n", k,
              static_cast<int>(dist), error);
  return error;
}

TEST(TensorCoreModel, Tf32SplitRoundsToNearestSoBigPlusSmallKeepsTwentyTwoBits) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> exponent(-20.0f, 20.0f), mantissa(1.0f, 2.0f);
  for (int i = 0; i < 100000; ++i) {
    const float x = mantissa(rng) * std::exp2(exponent(rng));
    const float big = tf32_round_nearest(x);
    const float small = tf32_round_nearest(x - big);
    // Each rounding to nearest keeps half an ulp of 11 significant bits; truncation would leave a whole one.
    ASSERT_LE(std::fabs(static_cast<double>(x) - big - small), std::ldexp(std::fabs(static_cast<double>(x)), -22))
        << "x = " << x;
  }
}

TEST(TensorCoreModel, WithRoundToNearestAccumulationTheSplitIsAsAccurateAsFfma) {
  // The split and the dropped small·small are not the cause: summed with FADD's rounding, 3xtf32 is fp32.
  const SplitDotModel nearest{MmaAccumulation::RoundToNearest, 0};
  EXPECT_LE(split_error(4096, nearest), 1.5 * ffma_error(4096));
}

TEST(TensorCoreModel, TruncatingTheRunningSumInEveryMmaGrowsLinearlyWithKAsMeasured) {
  const SplitDotModel truncating{MmaAccumulation::RoundResultTowardZero, 0};
  const double at_1024 = split_error(1024, truncating), at_4096 = split_error(4096, truncating);
  EXPECT_GE(at_4096 / at_1024, 3.0) << "linear growth quadruples the error from k = 1024 to 4096";
  EXPECT_GE(at_4096, 10 * split_error(4096, {MmaAccumulation::RoundToNearest, 0}));
  // The same order as the 2.7e-5 the H100 measured at k = 4096 (a model, not the hardware: within a factor of 3).
  EXPECT_GT(at_4096, 0.9e-5);
  EXPECT_LT(at_4096, 8e-5);
}

TEST(TensorCoreModel, TruncatingEachAlignedTermInsteadGrowsLikeRootKAndCannotExplainTheMeasurement) {
  // Per-term truncation toward zero has the sign of each product, not of the sum: no bias, √k growth, ~4e-6.
  const SplitDotModel per_term{MmaAccumulation::TruncateAlignedTerms, 0};
  const double at_1024 = split_error(1024, per_term), at_4096 = split_error(4096, per_term);
  EXPECT_LT(at_4096 / at_1024, 3.0);
  EXPECT_LT(at_4096, 0.9e-5);
}

TEST(TensorCoreModel, PromotingEveryK8StepIntoFaddRemovesTheGrowthUnderBothTruncationModels) {
  for (MmaAccumulation accumulation : {MmaAccumulation::RoundResultTowardZero, MmaAccumulation::TruncateAlignedTerms})
    for (InputDistribution dist : {InputDistribution::Uniform, InputDistribution::WideExponent})
      for (int k : {4096, 16384}) {
        // Fewer FADD roundings than sequential FFMA (one per 8 k) and only step-sized truncations: below FFMA.
        EXPECT_LE(split_error(k, {accumulation, 1}, dist), 0.6 * ffma_error(k, dist))
            << "k = " << k << ", dist " << static_cast<int>(dist);
      }
}

TEST(TensorCoreModel, TruncationScalesEveryOutputDownByMoreTheMoreStepsShareAnAccumulator) {
  // β is a sum over the dots: its noise is the error over √dots, so this many put it near 1e-9 at k = 1024.
  constexpr int kBiasDots = 16000, k = 1024;
  const auto bias = [&](InputDistribution dist, int steps) {
    const SplitDotModel model{MmaAccumulation::RoundResultTowardZero, steps};
    const double b = dot_scale_bias(k, kBiasDots, dist, 11, [model](const auto& x, const auto& y) {
      return split_tf32_dot(x, y, model);
    });
    std::printf("  3xtf32 model, truncating, promote every %d step(s), dist=%d: scale bias %+.2e\n", steps,
                static_cast<int>(dist), b);
    return b;
  };
  for (InputDistribution dist : {InputDistribution::Uniform, InputDistribution::Positive}) {
    const double one = bias(dist, 1), two = bias(dist, 2), four = bias(dist, 4);
    // One cut per step takes 2^-24 × E[1/mantissa] = 4.3e-8 of each step's sum; the H200 measured −4.0e-8 to −4.4e-8.
    EXPECT_LT(one, -2.5e-8);
    EXPECT_GT(one, -7e-8);
    EXPECT_LT(two, one);
    EXPECT_LT(four, two);
    // FFMA's round-to-nearest has no such direction.
    EXPECT_LT(std::fabs(dot_scale_bias(k, kBiasDots, dist, 11, ffma_dot)), 0.25 * std::fabs(one));
  }
}

}  // namespace
}  // namespace gemmtune::test
