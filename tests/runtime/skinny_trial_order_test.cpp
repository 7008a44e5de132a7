#include "runtime/skinny_trial_order.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace gemmtune::runtime {
namespace {

using kernels::Family;

// A registry's skinny variants in registry order: each family lists its 8-row tiles before its wider ones, as ours
// does.
std::vector<SkinnyVariant> registry() {
  return {{"ffma_8a", Family::Skinny, 8},         {"ffma_8b", Family::Skinny, 8},
          {"ffma_16a", Family::Skinny, 16},       {"mma_8a", Family::SkinnyMma, 8},
          {"mma_8b", Family::SkinnyMma, 8},       {"mma_16a", Family::SkinnyMma, 16},
          {"mma_16b", Family::SkinnyMma, 16},     {"mma_16c", Family::SkinnyMma, 16},
          {"mma_32a", Family::SkinnyMma, 32},     {"stream_8a", Family::SkinnyStream, 8},
          {"stream_32a", Family::SkinnyStream, 32}};
}

TEST(SkinnyTrialOrder, BetweenTwoRowTilesTheOneCoveringMComesFirstFamiliesTakingTurnsWithinEach) {
  const std::vector<std::string> want = {"ffma_16a", "mma_16a", "mma_16b", "mma_16c",  "ffma_8a",
                                         "mma_8a",   "stream_8a", "ffma_8b", "mma_8b"};
  EXPECT_EQ(skinny_trial_order(registry(), 11), want);
  EXPECT_EQ(skinny_trial_order(registry(), 16), want);
}

TEST(SkinnyTrialOrder, AtOrBelowTheSmallestRowTileOnlyItRunsAndNoWiderTilePadsRows) {
  const std::vector<std::string> want = {"ffma_8a", "mma_8a", "stream_8a", "ffma_8b", "mma_8b"};
  EXPECT_EQ(skinny_trial_order(registry(), 1), want);
  EXPECT_EQ(skinny_trial_order(registry(), 8), want);
}

TEST(SkinnyTrialOrder, AboveTheWidestRowTileOnlyTheWidestRuns) {
  const std::vector<std::string> want = {"mma_32a", "stream_32a"};
  EXPECT_EQ(skinny_trial_order(registry(), 40), want);
}

TEST(SkinnyRowsAlike, TimesWithinTheWidestRowTileRankTheVariantsThereAndTimesAboveItDoNot) {
  EXPECT_TRUE(skinny_rows_alike(16, 8, 16)) << "both within one or two row blocks";
  EXPECT_TRUE(skinny_rows_alike(1, 16, 16));
  EXPECT_FALSE(skinny_rows_alike(64, 4, 16)) << "64 rows read B four times over, 4 rows once";
  EXPECT_FALSE(skinny_rows_alike(17, 16, 16));
  EXPECT_FALSE(skinny_rows_alike(8, 40, 16)) << "and the other way round";
  EXPECT_TRUE(skinny_rows_alike(64, 17, 16));
}

TEST(SkinnyTrialOrder, NoVariantThatRunsTheProblemGivesAnEmptyOrder) {
  EXPECT_TRUE(skinny_trial_order({}, 11).empty());
}

}  // namespace
}  // namespace gemmtune::runtime
