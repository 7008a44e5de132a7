#include "runtime/variant_ranking.hpp"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "support/tuning_fixtures.hpp"

namespace gemmtune::runtime {
namespace {

using test::test_problem;

OwnVariantSpeed speed(const GemmProblem& p, const std::string& variant, double speedup) {
  OwnVariantSpeed v;
  v.problem = p;
  v.candidate.backend = Backend::Own;
  v.candidate.own_variant = variant;
  v.speedup = speedup;
  return v;
}

MeasuredShape shape(const GemmProblem& p, std::vector<std::pair<std::string, double>> variants) {
  MeasuredShape s{p, {}};
  for (const auto& [variant, speedup] : variants) s.variants.push_back(speed(p, variant, speedup));
  return s;
}

const auto as_measured = [](const Candidate& c) { return c; };

TEST(VariantRanking, TheNearestShapesMeasurementsOutweighFartherOnes) {
  const MeasuredShape near = shape(test_problem(1024, 1024, 1024), {{"tf32_a", 1.5}, {"tf32_b", 1.0}});
  const MeasuredShape far = shape(test_problem(8192, 1024, 1024), {{"tf32_a", 0.5}, {"tf32_b", 2.0}});
  // log-distances 0.1 and 2.0: the far shape weighs exp(-(4 - 0.01)) = 0.018 of the near one.
  const std::vector<RankedVariant> ranked = rank_own_variants({{&near, 0.1}, {&far, 2.0}}, as_measured);
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(ranked[0].candidate.id(), "own/tf32_a");
  EXPECT_EQ(ranked[0].shapes, 2);
  const double w = std::exp(-(4.0 - 0.01));
  EXPECT_NEAR(ranked[0].speedup, std::exp((std::log(1.5) + w * std::log(0.5)) / (1 + w)), 1e-12);
  EXPECT_NEAR(ranked[1].speedup, std::exp(w * std::log(2.0) / (1 + w)), 1e-12);

  // With the two shapes equally near, b's 2x and 1x beat a's 1.5x and 0.5x.
  const std::vector<RankedVariant> even = rank_own_variants({{&near, 1.0}, {&far, 1.0}}, as_measured);
  EXPECT_EQ(even[0].candidate.id(), "own/tf32_b");
  EXPECT_NEAR(even[0].speedup, std::sqrt(2.0), 1e-12);
}

TEST(VariantRanking, AVariantIsRankedOnlyByTheShapesItRanAt) {
  const MeasuredShape near = shape(test_problem(16, 1024, 1024), {{"skinny_a", 1.3}, {"tf32_b", 1.1}});
  const MeasuredShape far = shape(test_problem(1024, 1024, 1024), {{"tf32_b", 0.9}});
  const std::vector<RankedVariant> ranked = rank_own_variants({{&near, 0.2}, {&far, 1.5}}, as_measured);
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(ranked[0].candidate.id(), "own/skinny_a");
  EXPECT_EQ(ranked[0].shapes, 1);
  EXPECT_NEAR(ranked[0].speedup, 1.3, 1e-12) << "not diluted by a shape it could not run";
}

TEST(VariantRanking, TwinsMeasuredAtDifferentShapesAreOneVariantAsTheAskedProblemRunsIt) {
  const MeasuredShape aligned = shape(test_problem(1024, 1024, 1024), {{"wgmma_a", 1.2}});
  const MeasuredShape unaligned = shape(test_problem(1000, 1000, 999), {{"wgmma_a_staged", 1.4}});
  const auto unstaged = [](const Candidate& c) {
    Candidate twin = c;
    if (const auto at = twin.own_variant.find("_staged"); at != std::string::npos) twin.own_variant.erase(at);
    return twin;
  };
  const std::vector<RankedVariant> ranked = rank_own_variants({{&aligned, 0.5}, {&unaligned, 0.5}}, unstaged);
  ASSERT_EQ(ranked.size(), 1u);
  EXPECT_EQ(ranked[0].candidate.id(), "own/wgmma_a");
  EXPECT_EQ(ranked[0].shapes, 2);
  EXPECT_NEAR(ranked[0].speedup, std::sqrt(1.2 * 1.4), 1e-12);
}

TEST(VariantRanking, NoMeasuredShapesRankNothing) { EXPECT_TRUE(rank_own_variants({}, as_measured).empty()); }

// An exact entry's trial times the own variants its sweep timed faster than heuristic-first there, fastest first, one
// per variant, at most max_rivals; the slower ones and heuristic-first's equals are no rivals.
TEST(ExactShapeRivals, AreTheVariantsTimedFasterThanHeuristicFirstAtTheShapeFastestFirstUpToTheLimit) {
  const GemmProblem p = test_problem(2, 4096, 768);
  const std::vector<OwnVariantSpeed> at_shape = {speed(p, "skinny_c", 1.05), speed(p, "skinny_a", 1.14),
                                                 speed(p, "skinny_slow", 0.8), speed(p, "skinny_even", 1.0),
                                                 speed(p, "skinny_b", 1.14), speed(p, "skinny_a", 1.02),
                                                 speed(p, "skinny_d", 1.01)};
  const std::vector<RankedVariant> rivals = exact_shape_rivals(at_shape, 3);
  ASSERT_EQ(rivals.size(), 3u);
  EXPECT_EQ(rivals[0].candidate.id(), "own/skinny_a");  // ties by id
  EXPECT_EQ(rivals[1].candidate.id(), "own/skinny_b");
  EXPECT_EQ(rivals[2].candidate.id(), "own/skinny_c");
  EXPECT_DOUBLE_EQ(rivals[0].speedup, 1.14);
  EXPECT_EQ(exact_shape_rivals(at_shape, 10).size(), 4u);  // a, b, c, d: a once, not the slow or the even one
  EXPECT_TRUE(exact_shape_rivals(at_shape, 0).empty());
  EXPECT_TRUE(exact_shape_rivals({speed(p, "skinny_slow", 0.99)}, 3).empty());
}

// An own entry's rivals are the variants within kRivalWithin (10%) of its own speed at the shape, itself left out; an
// entry the sweep did not measure there has none.
TEST(ExactShapeRivals, OfAnOwnEntryAreOnlyItsNearTiesAndNoneWhereTheEntryWasNotMeasured) {
  const GemmProblem p = test_problem(2, 4096, 768);
  const std::vector<OwnVariantSpeed> at_shape = {speed(p, "kept", 2.2), speed(p, "near", 2.05),
                                                 speed(p, "faster", 2.3), speed(p, "far", 1.9)};
  Candidate kept;
  kept.backend = Backend::Own;
  kept.own_variant = "kept";
  const std::vector<RankedVariant> rivals = exact_shape_rivals(at_shape, 3, &kept);
  ASSERT_EQ(rivals.size(), 2u);  // 2.2 / 1.1 = 2.0: far (1.9) is out
  EXPECT_EQ(rivals[0].candidate.id(), "own/faster");
  EXPECT_EQ(rivals[1].candidate.id(), "own/near");
  Candidate unmeasured = kept;
  unmeasured.own_variant = "unmeasured";
  EXPECT_TRUE(exact_shape_rivals(at_shape, 3, &unmeasured).empty());
  EXPECT_TRUE(exact_shape_rivals({speed(p, "kept", 0.9), speed(p, "near", 0.89)}, 3, &kept).empty())
      << "no rival slower than heuristic-first";
}

}  // namespace
}  // namespace gemmtune::runtime
