#include "profiler/roofline_ranking.hpp"

#include <gtest/gtest.h>

#include "support/tuning_fixtures.hpp"

namespace gemmtune {
namespace {

const std::string kH100 = "NVIDIA H100 80GB HBM3|sm_90|132sm|drv580.159.04|lt130100";

TEST(RooflineRanking, CasesFurthestBelowTheirBoundComeFirst) {
  // 4096³ tf32 at 347 µs is at 80% of its compute bound; 1024³ tf32 at 60 µs is at 7%; 4096³ fp32 at 2691 µs at 76%.
  const std::vector<CacheEntry> entries = {
      test::test_entry(kH100, test::test_problem(4096, 4096, 4096), 1, 347),
      test::test_entry(kH100, test::test_problem(1024, 1024, 1024), 2, 60),
      test::test_entry(kH100, test::test_problem(4096, 4096, 4096, MathMode::Fp32), 3, 2691),
  };
  const RooflineRanking r = rank_by_roofline_gap(entries);
  ASSERT_EQ(r.cases.size(), 3u);
  EXPECT_EQ(r.cases[0].entry.problem.m, 1024);
  EXPECT_EQ(r.cases[1].entry.problem.mode, MathMode::Fp32);
  EXPECT_EQ(r.cases[2].entry.problem.mode, MathMode::Tf32);
  EXPECT_LT(r.cases[0].verdict.pct_of_bound, r.cases[1].verdict.pct_of_bound);
  EXPECT_LT(r.cases[1].verdict.pct_of_bound, r.cases[2].verdict.pct_of_bound);
  EXPECT_EQ(r.cases[0].peaks_model, "H100 SXM5");
  EXPECT_TRUE(r.unknown_gpus.empty());
}

TEST(RooflineRanking, EntriesOfGpusWithoutPeaksAreLeftOutAndNamedOnce) {
  const std::string unknown = test::test_device().key();
  const std::vector<CacheEntry> entries = {
      test::test_entry(unknown, test::test_problem(64, 64, 64), 1, 5),
      test::test_entry(unknown, test::test_problem(128, 64, 64), 1, 5),
      test::test_entry(kH100, test::test_problem(64, 64, 64), 1, 5),
  };
  const RooflineRanking r = rank_by_roofline_gap(entries);
  EXPECT_EQ(r.cases.size(), 1u);
  EXPECT_EQ(r.unknown_gpus, std::vector<std::string>{"NVIDIA Test GPU"});
}

}  // namespace
}  // namespace gemmtune
