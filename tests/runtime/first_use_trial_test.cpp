#include "runtime/first_use_trial.hpp"

#include <gtest/gtest.h>

namespace gemmtune::runtime {
namespace {

TEST(FirstUseTrial, ChallengerWhoseSlowestBatchBeatsTheDefaultsFastestByOnePercentIsKept) {
  const TrialResult t{/*challenger_us=*/60.0, /*default_us=*/75.0, /*challenger_slowest_us=*/62.0,
                      /*default_fastest_us=*/63.0};
  EXPECT_TRUE(t.challenger_wins());
}

TEST(FirstUseTrial, FasterMedianIsRefusedWhenTheDefaultsFastestBatchIsAsFast) {
  // The bimodal default: its median caught the slow speed, one batch ran the fast one.
  const TrialResult t{/*challenger_us=*/95.0, /*default_us=*/112.0, /*challenger_slowest_us=*/96.0,
                      /*default_fastest_us=*/94.0};
  EXPECT_FALSE(t.challenger_wins());
}

TEST(FirstUseTrial, AWinWithinTheOnePercentNoiseFloorIsRefused) {
  const TrialResult t{/*challenger_us=*/99.0, /*default_us=*/100.0, /*challenger_slowest_us=*/99.5,
                      /*default_fastest_us=*/100.0};
  EXPECT_FALSE(t.challenger_wins());
}

}  // namespace
}  // namespace gemmtune::runtime
