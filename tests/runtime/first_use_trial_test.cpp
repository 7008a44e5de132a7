#include "runtime/first_use_trial.hpp"

#include <gtest/gtest.h>

namespace gemmtune::runtime {
namespace {

TEST(FirstUseTrial, StandinWhoseSlowestBatchBeatsTheDefaultsFastestByOnePercentIsKept) {
  const TrialResult t{/*standin_us=*/60.0, /*default_us=*/75.0, /*standin_slowest_us=*/62.0,
                      /*default_fastest_us=*/63.0};
  EXPECT_TRUE(t.standin_wins());
}

TEST(FirstUseTrial, FasterMedianIsRefusedWhenTheDefaultsFastestBatchIsAsFast) {
  // The bimodal default: its median caught the slow speed, one batch ran the fast one.
  const TrialResult t{/*standin_us=*/95.0, /*default_us=*/112.0, /*standin_slowest_us=*/96.0,
                      /*default_fastest_us=*/94.0};
  EXPECT_FALSE(t.standin_wins());
}

TEST(FirstUseTrial, AWinWithinTheOnePercentNoiseFloorIsRefused) {
  const TrialResult t{/*standin_us=*/99.0, /*default_us=*/100.0, /*standin_slowest_us=*/99.5,
                      /*default_fastest_us=*/100.0};
  EXPECT_FALSE(t.standin_wins());
}

}  // namespace
}  // namespace gemmtune::runtime
