#include "tuner/stopping_rule.hpp"

#include <gtest/gtest.h>

namespace gemmtune {
namespace {

TimingSettings settings() {
  TimingSettings t;
  t.min_samples = 10;
  t.max_noise_pct = 1.0;
  t.min_time_ms = 0.1;  // 100 us
  t.max_time_ms = 1.0;  // 1000 us
  return t;
}

TEST(NoiseStoppingRule, StopsOnceQuietWithEnoughSamplesAndTime) {
  NoiseStoppingRule rule(settings());
  rule.add(std::vector<double>(9, 20.0));
  EXPECT_FALSE(rule.done()) << "9 samples are fewer than min_samples";
  rule.add({20.0});
  EXPECT_TRUE(rule.done());
  EXPECT_EQ(rule.reason(), "converged");
}

TEST(NoiseStoppingRule, KeepsSamplingWhileTheMedianIsUncertainUntilTheTimeCap) {
  NoiseStoppingRule rule(settings());
  // Half the calls at 10 us, half at 30 us: sigma ~ 7.8 us, so the median's error is ~ 20%/sqrt(n): over 1% until
  // n > 400, far past the 1000 us cap.
  for (int i = 0; i < 10; ++i) rule.add({10.0, 30.0});
  EXPECT_FALSE(rule.done());
  for (int i = 0; i < 30; ++i) rule.add({10.0, 30.0});
  EXPECT_TRUE(rule.done());
  EXPECT_EQ(rule.reason(), "time cap");
}

TEST(NoiseStoppingRule, JitteryButSettledMedianConverges) {
  TimingSettings t = settings();
  t.max_noise_pct = 0.25;
  t.max_time_ms = 100;
  NoiseStoppingRule rule(t);
  // +-5% jitter: single samples never agree within 0.25%, but the median's error shrinks as 4.9%/sqrt(n).
  for (int i = 0; i < 20; ++i) rule.add({9.5, 10.0, 10.5, 10.0});
  EXPECT_FALSE(rule.done()) << "80 samples: the median is still uncertain by about 0.55%";
  for (int i = 0; i < 100; ++i) rule.add({9.5, 10.0, 10.5, 10.0});
  EXPECT_TRUE(rule.done());
  EXPECT_EQ(rule.reason(), "converged");
}

TEST(NoiseStoppingRule, NeedsTheMinimumKernelTimeEvenWhenQuiet) {
  NoiseStoppingRule rule(settings());
  rule.add(std::vector<double>(20, 1.0));  // 20 us of kernel time < 100 us
  EXPECT_FALSE(rule.done());
  rule.add(std::vector<double>(80, 1.0));
  EXPECT_TRUE(rule.done());
}

}  // namespace
}  // namespace gemmtune
