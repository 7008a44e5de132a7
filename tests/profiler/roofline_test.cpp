#include "profiler/roofline.hpp"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace gemmtune {
namespace {

// H100 SXM nominal ceilings: 495 TFLOP/s tf32, 3.35 TB/s, so the ridge is at 147.8 FLOP/byte.
constexpr double kPeak = 495, kBandwidth = 3.35;

TEST(Roofline, LowIntensityCallIsMemoryBoundAndMeasuredAgainstBandwidth) {
  // 1 GFLOP over 100 MB: 10 FLOP/byte; the bound is 33.5 TFLOP/s; 10 TFLOP/s achieved (100 µs) is 29.9% of it.
  const RooflineVerdict v = classify_roofline(1e9, 1e8, 100e-6, kPeak, kBandwidth);
  EXPECT_EQ(v.bound, RooflineBound::Memory);
  EXPECT_DOUBLE_EQ(v.intensity, 10.0);
  EXPECT_NEAR(v.ridge, 147.76, 0.01);
  EXPECT_NEAR(v.attainable_tflops, 33.5, 1e-9);
  EXPECT_NEAR(v.achieved_tflops, 10.0, 1e-9);
  EXPECT_NEAR(v.pct_of_bound, 29.85, 0.01);
}

TEST(Roofline, HighIntensityCallIsComputeBoundAndMeasuredAgainstPeak) {
  // 4096³ tf32 at DEVICE.md's 347 µs with the analytic minimum of bytes: 683 FLOP/byte, 396 of 495 TFLOP/s.
  const GemmProblem p = GemmProblem::parse_key("fwd:4096x4096x4096:nn:row:none:tf32");
  const RooflineVerdict v = classify_roofline(p.flops(), min_dram_bytes(p), 347e-6, kPeak, kBandwidth);
  EXPECT_EQ(v.bound, RooflineBound::Compute);
  EXPECT_NEAR(v.intensity, 682.7, 0.1);
  EXPECT_DOUBLE_EQ(v.attainable_tflops, kPeak);
  EXPECT_NEAR(v.achieved_tflops, 396.1, 0.1);
  EXPECT_NEAR(v.pct_of_bound, 80.0, 0.1);
}

TEST(Roofline, AtTheRidgeBothCeilingsAgree) {
  const double ridge = kPeak / kBandwidth;
  const RooflineVerdict v = classify_roofline(ridge * 1e9, 1e9, 1.0, kPeak, kBandwidth);
  EXPECT_EQ(v.bound, RooflineBound::Compute);
  EXPECT_NEAR(v.attainable_tflops, kPeak, 1e-9);
}

TEST(Roofline, NonPositiveOrNonFiniteInputIsRejected) {
  EXPECT_THROW(classify_roofline(1e9, 0, 1e-3, kPeak, kBandwidth), InputError);
  EXPECT_THROW(classify_roofline(1e9, 1e6, 0, kPeak, kBandwidth), InputError);
  EXPECT_THROW(classify_roofline(1e9, 1e6, 1e-3, -1, kBandwidth), InputError);
  EXPECT_THROW(classify_roofline(std::numeric_limits<double>::quiet_NaN(), 1e6, 1e-3, kPeak, kBandwidth), InputError);
}

TEST(Roofline, MinimumBytesCountEachOperandOnceWithBiasAndZ) {
  EXPECT_DOUBLE_EQ(min_dram_bytes(GemmProblem::parse_key("fwd:4096x4096x4096:nn:row:none:fp32")),
                   3.0 * 4096 * 4096 * 4);
  EXPECT_DOUBLE_EQ(min_dram_bytes(GemmProblem::parse_key("fwd:2x3x5:nn:row:bias+relu+z:fp32")),
                   (2 * 5 + 5 * 3 + 2 * 3 + 2 * 3 + 3) * 4.0);
  // Backward, the activation's derivative reads Z; without an activation there is nothing to read.
  EXPECT_DOUBLE_EQ(min_dram_bytes(GemmProblem::parse_key("bwd_a:2x3x5:nn:row:relu:fp32")),
                   (2 * 5 + 5 * 3 + 2 * 3 + 2 * 3) * 4.0);
  EXPECT_DOUBLE_EQ(min_dram_bytes(GemmProblem::parse_key("bwd_b:2x3x5:nn:row:none:fp32")),
                   (2 * 5 + 5 * 3 + 2 * 3) * 4.0);
}

}  // namespace
}  // namespace gemmtune
