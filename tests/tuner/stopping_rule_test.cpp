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

TEST(NoiseStoppingRule, KeepsSamplingWhileNoisyUntilTheTimeCap) {
  NoiseStoppingRule rule(settings());
  for (int i = 0; i < 10; ++i) rule.add({10.0, 30.0});  // (p90 - p10)/median = 100%: never converges
  EXPECT_FALSE(rule.done());
  for (int i = 0; i < 30; ++i) rule.add({10.0, 30.0});
  EXPECT_TRUE(rule.done());
  EXPECT_EQ(rule.reason(), "time cap");
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
