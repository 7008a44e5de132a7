#include "tuner/statistics.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace gemmtune {
namespace {

TEST(Summarize, MedianAndPercentilesAreOrderIndependent) {
  const TimingStats s = summarize({5, 1, 4, 2, 3});
  EXPECT_DOUBLE_EQ(s.median_us, 3);
  EXPECT_DOUBLE_EQ(s.min_us, 1);
  EXPECT_DOUBLE_EQ(s.max_us, 5);
  EXPECT_DOUBLE_EQ(s.p10_us, 1.4);  // linear interpolation between ranks 0 and 1
  EXPECT_DOUBLE_EQ(s.p90_us, 4.6);
  EXPECT_DOUBLE_EQ(s.mean_us, 3);
  EXPECT_EQ(s.samples, 5);
}

TEST(Summarize, OneOutlierMovesTheMeanButNotTheMedian) {
  std::vector<double> v(99, 10.0);
  v.push_back(1000.0);
  const TimingStats s = summarize(v);
  EXPECT_DOUBLE_EQ(s.median_us, 10.0);
  EXPECT_GT(s.mean_us, 19.0);
  EXPECT_DOUBLE_EQ(s.rel_spread(), 0.0);
}

TEST(Summarize, RefusesAnEmptySample) { EXPECT_THROW(summarize({}), CheckError); }

}  // namespace
}  // namespace gemmtune
