#include "runtime/selection.hpp"

#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "db/tuning_db.hpp"
#include "support/scratch_dir.hpp"
#include "support/tuning_fixtures.hpp"

namespace gemmtune::runtime {
namespace {

using test::test_entry;
using test::test_problem;

const std::string kHere = test::test_device("NVIDIA Here").key();

// A GPU-free stand-in for the re-check: candidates whose algo id is in `broken` "no longer apply".
struct FakeChecks {
  std::set<int> broken;
  std::vector<std::string> checked;  // ids, in the order selection asked

  SupportCheck supports() {
    return [this](const GemmProblem&, const Candidate& c) -> std::string {
      checked.push_back(c.id());
      return broken.count(c.lt.algo_id) ? "algo " + std::to_string(c.lt.algo_id) + " is gone" : "";
    };
  }
};

DefaultChooser heuristic_default() {
  return [](const GemmProblem&) {
    DefaultCandidate d;
    d.candidate.lt.algo_id = 999;
    d.how = "the heuristic's first algo";
    return d;
  };
}

SelectionRules rules(double max_distance = std::log(4.0)) {
  SelectionRules r;
  r.max_nearest_distance = max_distance;
  return r;
}

const GemmProblem kAsked = test_problem(1000, 1000, 1000);

CacheIndex small_cache() {
  return CacheIndex({test_entry(kHere, kAsked, 1, 15.25), test_entry(kHere, test_problem(1024, 1024, 1024), 2, 16),
                     test_entry(kHere, test_problem(768, 1024, 1024), 3, 12), test_entry(kHere, test_problem(64, 64, 64), 4, 3)},
                    kHere);
}

TEST(Selection, AnExactEntryThatStillAppliesIsUsedAndIsNotAMiss) {
  FakeChecks checks;
  const Choice c = select_candidate(small_cache(), kAsked, rules(), checks.supports(), heuristic_default());
  EXPECT_EQ(c.source, ChoiceSource::Exact);
  EXPECT_EQ(c.candidate.lt.algo_id, 1);
  EXPECT_FALSE(c.is_miss());
  EXPECT_NE(c.why.find("exact cache hit"), std::string::npos) << c.why;
  EXPECT_NE(c.why.find("15.25 us"), std::string::npos) << c.why;
  EXPECT_EQ(checks.checked.size(), 1u) << "the exact entry is re-checked too";
}

TEST(Selection, WithoutAnExactEntryTheNearestTunedShapeOfTheKindIsUsed) {
  FakeChecks checks;
  const GemmProblem asked = test_problem(960, 1000, 1000);
  const Choice c = select_candidate(small_cache(), asked, rules(), checks.supports(), heuristic_default());
  EXPECT_EQ(c.source, ChoiceSource::Nearest);
  EXPECT_EQ(c.candidate.lt.algo_id, 1);  // ln(1000/960) = 0.041; 1024³ is at 0.073
  EXPECT_TRUE(c.is_miss());
  EXPECT_NE(c.why.find("nearest tuned shape 1000x1000x1000 at log-distance 0.04"), std::string::npos) << c.why;
  EXPECT_NE(c.why.find("re-checked OK"), std::string::npos) << c.why;
}

TEST(Selection, AStaleExactEntryFallsToTheNearestOneAndSaysWhy) {
  FakeChecks checks;
  checks.broken = {1};
  const Choice c = select_candidate(small_cache(), kAsked, rules(), checks.supports(), heuristic_default());
  EXPECT_EQ(c.source, ChoiceSource::Nearest);
  EXPECT_EQ(c.candidate.lt.algo_id, 2);
  EXPECT_TRUE(c.is_miss()) << "a problem whose entry no longer applies must be tuned again";
  EXPECT_NE(c.why.find("no longer applies: algo 1 is gone"), std::string::npos) << c.why;
}

TEST(Selection, NeighborsThatDoNotApplyAreSkippedInDistanceOrder) {
  FakeChecks checks;
  checks.broken = {1, 2};
  const Choice c = select_candidate(small_cache(), kAsked, rules(), checks.supports(), heuristic_default());
  EXPECT_EQ(c.candidate.lt.algo_id, 3);
  ASSERT_EQ(checks.checked.size(), 3u);
  EXPECT_NE(c.why.find("1024x1024x1024's"), std::string::npos) << c.why;
}

TEST(Selection, ShapesBeyondTheDistanceLimitFallBackToTheDefault) {
  FakeChecks checks;
  const GemmProblem asked = test_problem(16, 16, 16);  // 64³ is at √3·ln 4 = 2.40
  const Choice c = select_candidate(small_cache(), asked, rules(), checks.supports(), heuristic_default());
  EXPECT_EQ(c.source, ChoiceSource::Default);
  EXPECT_EQ(c.candidate.lt.algo_id, 999);
  EXPECT_TRUE(c.is_miss());
  EXPECT_NE(c.why.find("the heuristic's first algo, because the nearest tuned shape 64x64x64 is at log-distance 2.40"),
            std::string::npos)
      << c.why;
  EXPECT_TRUE(checks.checked.empty()) << "a candidate out of range need not be checked";
}

TEST(Selection, WhenEveryCachedCandidateIsStaleTheDefaultSaysSo) {
  FakeChecks checks;
  checks.broken = {1, 2, 3, 4};
  const Choice c = select_candidate(small_cache(), kAsked, rules(10.0), checks.supports(), heuristic_default());
  EXPECT_EQ(c.source, ChoiceSource::Default);
  EXPECT_NE(c.why.find("no cached candidate of this kind applies"), std::string::npos) << c.why;
  EXPECT_NE(c.why.find("the exact entry"), std::string::npos) << c.why;
}

TEST(Selection, AnotherKindIsNeverUsedEvenAtTheSameShape) {
  FakeChecks checks;
  GemmProblem asked = kAsked;
  asked.mode = MathMode::Fp32;
  const Choice c = select_candidate(small_cache(), asked, rules(), checks.supports(), heuristic_default());
  EXPECT_EQ(c.source, ChoiceSource::Default);
  EXPECT_NE(c.why.find("no tuned entry of kind " + asked.kind_key()), std::string::npos) << c.why;
}

TEST(Selection, AnEmptyCacheExplainsItselfWithTheCallersNote) {
  FakeChecks checks;
  SelectionRules r = rules();
  r.cache_note = "the db 'x.db' was not found";
  const Choice c = select_candidate(CacheIndex({}, kHere), kAsked, r, checks.supports(), heuristic_default());
  EXPECT_EQ(c.source, ChoiceSource::Default);
  EXPECT_NE(c.why.find("because the db 'x.db' was not found"), std::string::npos) << c.why;
}


// Fallback with evidence: the default is cuBLASLt's heuristic first choice, as for every tf32/fp32 problem.
DefaultChooser lt_heuristic_default() {
  return [](const GemmProblem&) {
    DefaultCandidate d;
    d.candidate.lt.algo_id = 999;
    d.how = "cuBLASLt heuristic default";
    d.heuristic_first = true;
    return d;
  };
}

MarginEvidence margins(double stream_warm, double graph_cold) {
  MarginEvidence e;
  e.conditions = {{"stream/warm", stream_warm, 0.01}, {"graph/cold", graph_cold, 0.01}};
  return e;
}

CacheEntry own_entry(const GemmProblem& p, const std::string& variant, const MarginEvidence& evidence) {
  CacheEntry e = test_entry(kHere, p, 0, 20);
  e.candidate = Candidate{};
  e.candidate.backend = Backend::Own;
  e.candidate.own_variant = variant;
  e.evidence = evidence;
  return e;
}

const GemmProblem kUntuned = test_problem(1000, 1000, 960);
const GemmProblem kTuned = test_problem(1024, 1024, 1024);  // log-distance 0.07 from kUntuned

TEST(FallbackEvidence, AnOwnVariantWithoutAStoredMarginDoesNotStandIn) {
  FakeChecks checks;
  const CacheIndex index({own_entry(kTuned, "tf32_a", MarginEvidence{})}, kHere);
  const Choice c = select_candidate(index, kUntuned, rules(), checks.supports(), lt_heuristic_default());
  EXPECT_EQ(c.source, ChoiceSource::Default);
  EXPECT_EQ(c.candidate.lt.algo_id, 999);
  EXPECT_NE(c.why.find("its margin over heuristic-first is not known"), std::string::npos) << c.why;
  EXPECT_NE(c.why.find("1024x1024x1024 at log-distance 0.07"), std::string::npos) << c.why;
}

// A second tuned shape in range (log-distance 0.14) that chose the same variant: two shapes agree.
const GemmProblem kAlsoTuned = test_problem(1100, 1100, 1000);

TEST(FallbackEvidence, AnOwnVariantThatWonByTenPercentInEveryConditionStandsInAndExplainWhy) {
  FakeChecks checks;
  const CacheIndex index(
      {own_entry(kTuned, "tf32_a", margins(1.25, 1.15)), own_entry(kAlsoTuned, "tf32_a", margins(1.3, 1.2))}, kHere);
  const Choice c = select_candidate(index, kUntuned, rules(), checks.supports(), lt_heuristic_default());
  EXPECT_EQ(c.source, ChoiceSource::Nearest);
  EXPECT_EQ(c.candidate.id(), "own/tf32_a");
  EXPECT_TRUE(c.is_miss()) << "a stand-in is still a shape to tune";
  EXPECT_NE(c.why.find("1024x1024x1024 at log-distance 0.07 stands in"), std::string::npos) << c.why;
  EXPECT_NE(c.why.find("x1.150 (min over stream/warm x1.250, graph/cold x1.150"), std::string::npos) << c.why;
  EXPECT_NE(c.why.find("all 2 tuned shapes within 1.39"), std::string::npos) << c.why;
}

TEST(FallbackEvidence, OneTunedShapeAloneDoesNotVouchForItsVariant) {
  FakeChecks checks;
  const CacheIndex index({own_entry(kTuned, "tf32_a", margins(1.25, 1.15))}, kHere);
  const Choice c = select_candidate(index, kUntuned, rules(), checks.supports(), lt_heuristic_default());
  EXPECT_EQ(c.source, ChoiceSource::Default);
  EXPECT_NE(c.why.find("only 1 tuned shape in range chose own/tf32_a; 2 agreeing shapes are needed"),
            std::string::npos)
      << c.why;

  SelectionRules one = rules();
  one.min_agreeing_neighbours = 1;
  EXPECT_EQ(select_candidate(index, kUntuned, one, checks.supports(), lt_heuristic_default()).source,
            ChoiceSource::Nearest);
}

TEST(FallbackEvidence, TunedShapesThatChoseDifferentOwnVariantsDoNotAgree) {
  FakeChecks checks;
  const CacheIndex index(
      {own_entry(kTuned, "tf32_a", margins(1.25, 1.15)), own_entry(kAlsoTuned, "tf32_b", margins(1.3, 1.2))}, kHere);
  const Choice c = select_candidate(index, kUntuned, rules(), checks.supports(), lt_heuristic_default());
  EXPECT_EQ(c.source, ChoiceSource::Default);
  EXPECT_NE(c.why.find("the tuned shapes in range disagree (1024x1024x1024 chose own/tf32_a, 1100x1100x1000 chose "
                       "own/tf32_b)"),
            std::string::npos)
      << c.why;
}

TEST(FallbackEvidence, AMarginBelowTheThresholdInOneConditionIsRefused) {
  FakeChecks checks;
  const CacheIndex index({own_entry(kTuned, "tf32_a", margins(1.40, 1.08))}, kHere);
  const Choice c = select_candidate(index, kUntuned, rules(), checks.supports(), lt_heuristic_default());
  EXPECT_EQ(c.source, ChoiceSource::Default);
  EXPECT_NE(c.why.find("is below the x1.10 a stand-in needs"), std::string::npos) << c.why;
}

TEST(FallbackEvidence, ACublasLtAlgoNeverStandsInWhateverItsMargin) {
  FakeChecks checks;
  CacheEntry lt = test_entry(kHere, kTuned, 55, 20);
  lt.candidate.lt.splitk = 4;
  lt.evidence = margins(1.5, 1.5);
  const Choice c = select_candidate(CacheIndex({lt}, kHere), kUntuned, rules(), checks.supports(),
                                    lt_heuristic_default());
  EXPECT_EQ(c.source, ChoiceSource::Default);
  EXPECT_NE(c.why.find("does not transfer"), std::string::npos) << c.why;
}

TEST(FallbackEvidence, OneDisagreeingNeighbourInRangeVetoesTheNearest) {
  FakeChecks checks;
  CacheEntry heuristic_won = test_entry(kHere, test_problem(1000, 2000, 1000), 21, 30);  // log-distance 0.69
  heuristic_won.evidence = margins(1.0, 1.0);
  const CacheIndex index({own_entry(kTuned, "tf32_a", margins(1.3, 1.3)), heuristic_won}, kHere);
  const Choice c = select_candidate(index, kUntuned, rules(), checks.supports(), lt_heuristic_default());
  EXPECT_EQ(c.source, ChoiceSource::Default);
  EXPECT_NE(c.why.find("the tuned shape 1000x2000x1000 at log-distance 0.69 chose lt/a21"), std::string::npos)
      << c.why;

  // The same disagreeing shape out of range (a tighter limit) no longer vetoes; one agreeing shape is asked for.
  SelectionRules tight = rules(0.5);
  tight.min_agreeing_neighbours = 1;
  const Choice near = select_candidate(index, kUntuned, tight, checks.supports(), lt_heuristic_default());
  EXPECT_EQ(near.source, ChoiceSource::Nearest);
  EXPECT_EQ(near.candidate.id(), "own/tf32_a");
}

TEST(FallbackEvidence, OnAFixtureDbTheStandInIsRefusedWithoutEvidenceAndAcceptedWithIt) {
  const test::ScratchDir dir;
  const std::string path = dir.path("fixture.db");
  CacheEntry without = own_entry(kTuned, "tf32_a", MarginEvidence{});
  CacheEntry with = own_entry(test_problem(1024, 1024, 1024, MathMode::Fp32), "fp32_b", margins(1.2, 1.3));
  CacheEntry agreeing = own_entry(test_problem(1100, 1100, 1000, MathMode::Fp32), "fp32_b", margins(1.25, 1.3));
  with.origin = without.origin = agreeing.origin = "fixture.json";
  TuningDb(path).merge_cache_entries({without, with, agreeing});

  const LoadedCache loaded = load_cache(path, kHere);
  ASSERT_EQ(loaded.index.size(), 3u);
  FakeChecks checks;
  const Choice refused = select_candidate(loaded.index, kUntuned, rules(), checks.supports(), lt_heuristic_default());
  EXPECT_EQ(refused.source, ChoiceSource::Default) << refused.why;
  const Choice accepted = select_candidate(loaded.index, test_problem(1000, 1000, 960, MathMode::Fp32), rules(),
                                           checks.supports(), lt_heuristic_default());
  EXPECT_EQ(accepted.source, ChoiceSource::Nearest) << accepted.why;
  EXPECT_EQ(accepted.candidate.id(), "own/fp32_b");
  EXPECT_NE(accepted.why.find("x1.200"), std::string::npos) << accepted.why;
}


TEST(FallbackEvidence, WithAFirstUseTrialAnyOwnVariantThatBeatHeuristicFirstIsPutToTheTrial) {
  FakeChecks checks;
  CacheEntry heuristic_won = test_entry(kHere, test_problem(1000, 2000, 1000), 21, 30);
  heuristic_won.evidence = margins(1.0, 1.0);
  const CacheIndex index({own_entry(kTuned, "tf32_a", margins(1.05, 1.04)), heuristic_won}, kHere);
  SelectionRules r = rules();
  r.confirm_on_first_use = true;
  const Choice c = select_candidate(index, kUntuned, r, checks.supports(), lt_heuristic_default());
  EXPECT_EQ(c.source, ChoiceSource::Nearest) << "x1.04 and a disagreeing neighbour: the trial decides, not the rule";
  EXPECT_EQ(c.candidate.id(), "own/tf32_a");
  EXPECT_NE(c.why.find("to be confirmed against heuristic-first on this problem"), std::string::npos) << c.why;

  // Without a stored margin even the trial is not worth a millisecond: nothing says it ever won.
  const CacheIndex unknown({own_entry(kTuned, "tf32_a", MarginEvidence{})}, kHere);
  const Choice d = select_candidate(unknown, kUntuned, r, checks.supports(), lt_heuristic_default());
  EXPECT_EQ(d.source, ChoiceSource::Default);
  EXPECT_NE(d.why.find("is no candidate for a trial: its margin over heuristic-first is not known"),
            std::string::npos)
      << d.why;
}

TEST(FallbackEvidence, AFirstUseTrialAlsoTriesTheOwnVariantsOfFartherShapesUpToItsLimit) {
  FakeChecks checks;
  CacheEntry lt_won = test_entry(kHere, test_problem(1000, 1000, 1024), 21, 30);  // the nearest: a cuBLASLt algo
  lt_won.evidence = margins(1.2, 1.2);
  const CacheIndex index({lt_won, own_entry(kTuned, "tf32_a", margins(1.05, 1.04)),
                          own_entry(test_problem(1024, 1024, 2048), "tf32_a", margins(1.3, 1.3)),  // a repeat
                          own_entry(test_problem(4096, 1024, 1024), "tf32_b", margins(1.2, 1.1)),
                          own_entry(test_problem(64, 8192, 8192), "tf32_c", margins(1.6, 1.5)),  // far beyond range
                          own_entry(test_problem(8192, 64, 64), "tf32_d", margins(1.6, 1.5))},
                         kHere);
  SelectionRules r = rules();
  r.confirm_on_first_use = true;
  r.max_trial_candidates = 3;
  const Choice c = select_candidate(index, kUntuned, r, checks.supports(), lt_heuristic_default());
  EXPECT_EQ(c.source, ChoiceSource::Nearest) << c.why;
  EXPECT_EQ(c.candidate.id(), "own/tf32_a");
  ASSERT_EQ(c.trial_alternatives.size(), 2u) << "three distinct variants in all, the limit";
  EXPECT_EQ(c.trial_alternatives[0].candidate.id(), "own/tf32_b");
  EXPECT_EQ(c.trial_alternatives[1].candidate.id(), "own/tf32_c");
  EXPECT_NE(c.trial_alternatives[1].source.find("chosen at 64x8192x8192, log-distance "), std::string::npos)
      << c.trial_alternatives[1].source;
  EXPECT_NE(c.why.find("lt/a21-"), std::string::npos) << "the cuBLASLt choice in range is named as refused: " << c.why;

  r.max_trial_candidates = 8;  // more than the kind offers: every distinct own choice, nearest first
  const Choice all = select_candidate(index, kUntuned, r, checks.supports(), lt_heuristic_default());
  ASSERT_EQ(all.trial_alternatives.size(), 3u) << all.why;
  EXPECT_EQ(all.trial_alternatives[2].candidate.id(), "own/tf32_d");

  r.max_trial_candidates = 1;
  const Choice one = select_candidate(index, kUntuned, r, checks.supports(), lt_heuristic_default());
  EXPECT_EQ(one.candidate.id(), "own/tf32_a");
  EXPECT_TRUE(one.trial_alternatives.empty());

  // Without the trial, the same cache gives no stand-in: the nearest tuned shape chose a cuBLASLt algo.
  const Choice untried = select_candidate(index, kUntuned, rules(), checks.supports(), lt_heuristic_default());
  EXPECT_EQ(untried.source, ChoiceSource::Default) << untried.why;
  EXPECT_TRUE(untried.trial_alternatives.empty());
}

// What a sweep measured at one tuned shape: each own variant's speed over heuristic-first there.
std::vector<OwnVariantSpeed> measured_at(const GemmProblem& p, std::vector<std::pair<std::string, double>> variants) {
  std::vector<OwnVariantSpeed> out;
  for (const auto& [variant, speedup] : variants) {
    OwnVariantSpeed v;
    v.problem = p;
    v.candidate.backend = Backend::Own;
    v.candidate.own_variant = variant;
    v.speedup = speedup;
    out.push_back(v);
  }
  return out;
}

TEST(FallbackEvidence, AFirstUseTrialTriesTheVariantsMeasuredFastestNearbyBeforeTheChosenOnes) {
  // kTuned chose tf32_a by x1.05, but its sweep timed tf32_x at x1.40; tf32_y, x1.20 there, cannot run kUntuned.
  // A farther shape chose tf32_c, which no sweep here measured (its db came through import).
  const CacheIndex index({own_entry(kTuned, "tf32_a", margins(1.05, 1.04)),
                          own_entry(test_problem(64, 8192, 8192), "tf32_c", margins(1.6, 1.5))},
                         kHere,
                         measured_at(kTuned, {{"tf32_a", 1.05}, {"tf32_x", 1.4}, {"tf32_y", 1.2}, {"tf32_z", 0.8}}));
  const SupportCheck supports = [](const GemmProblem&, const Candidate& c) -> std::string {
    return c.own_variant == "tf32_y" ? "its tile does not fit" : "";
  };
  SelectionRules r = rules();
  r.confirm_on_first_use = true;
  r.max_trial_candidates = 8;
  const Choice c = select_candidate(index, kUntuned, r, supports, lt_heuristic_default());
  EXPECT_EQ(c.source, ChoiceSource::Nearest) << c.why;
  EXPECT_EQ(c.candidate.id(), "own/tf32_x");
  EXPECT_NE(c.why.find("own/tf32_x ranked 1 of the 4 own variants the sweeps measured (x1.40 over heuristic-first "
                       "at 1 measured shape of the kind, weighted toward 1024x1024x1024 at log-distance 0.07)"),
            std::string::npos)
      << c.why;
  ASSERT_EQ(c.trial_alternatives.size(), 3u) << "x, a and z as measured (y cannot run here), then c as chosen";
  EXPECT_EQ(c.trial_alternatives[0].candidate.id(), "own/tf32_a");
  EXPECT_EQ(c.trial_alternatives[0].source.rfind("ranked 3 of 4: x1.05", 0), 0u) << c.trial_alternatives[0].source;
  EXPECT_EQ(c.trial_alternatives[1].candidate.id(), "own/tf32_z") << "a variant slower nearby is still worth a try";
  EXPECT_EQ(c.trial_alternatives[2].candidate.id(), "own/tf32_c");
  EXPECT_EQ(c.trial_alternatives[2].source.rfind("chosen at 64x8192x8192", 0), 0u) << c.trial_alternatives[2].source;

  r.max_trial_candidates = 2;
  const Choice two = select_candidate(index, kUntuned, r, supports, lt_heuristic_default());
  EXPECT_EQ(two.candidate.id(), "own/tf32_x");
  ASSERT_EQ(two.trial_alternatives.size(), 1u);
  EXPECT_EQ(two.trial_alternatives[0].candidate.id(), "own/tf32_a");
}

// A GPU-free SpecialistsOf: three "skinny" variants for problems with m ≤ 64, none for the others.
Specialists three_skinny(const GemmProblem& p) {
  Specialists s{{}, "the skinny variants, made for decode-sized m", {}};
  if (p.m > 64) return s;
  for (const char* v : {"skinny_1", "skinny_2", "skinny_3"}) {
    Candidate c;
    c.backend = Backend::Own;
    c.own_variant = v;
    s.candidates.push_back(c);
  }
  return s;
}

const GemmProblem kDecode = test_problem(8, 2048, 352);

TEST(FallbackEvidence, ADecodeSizedTrialTimesTheSkinnyVariantsNoSweepMeasuredFirstInHalfTheLimit) {
  // The tuned shapes are all large, so their sweeps measured tile variants only; skinny_2 cannot run kDecode.
  const CacheIndex index({own_entry(kTuned, "tf32_a", margins(1.05, 1.04))}, kHere,
                         measured_at(kTuned, {{"tf32_a", 1.05}, {"tf32_x", 1.4}, {"tf32_z", 0.8}}));
  const SupportCheck supports = [](const GemmProblem&, const Candidate& c) -> std::string {
    return c.own_variant == "skinny_2" ? "its tile does not fit" : "";
  };
  SelectionRules r = rules();
  r.confirm_on_first_use = true;
  r.max_trial_candidates = 4;
  const Choice c = select_candidate(index, kDecode, r, supports, lt_heuristic_default(), {}, &three_skinny);
  EXPECT_EQ(c.source, ChoiceSource::Nearest) << c.why;
  EXPECT_EQ(c.candidate.id(), "own/skinny_1");
  EXPECT_NE(c.why.find("own/skinny_1 is one of the skinny variants, made for decode-sized m that no sweep measured at "
                       "the kind's tuned shapes (2 tried here)"),
            std::string::npos)
      << c.why;
  ASSERT_EQ(c.trial_alternatives.size(), 3u) << "skinny_3, then the ranked x and a fill the limit of 4";
  EXPECT_EQ(c.trial_alternatives[0].candidate.id(), "own/skinny_3");
  EXPECT_EQ(c.trial_alternatives[1].candidate.id(), "own/tf32_x");
  EXPECT_EQ(c.trial_alternatives[2].candidate.id(), "own/tf32_a");

  // Half of a limit of 2 is one specialist; the best ranked variant keeps the other place.
  r.max_trial_candidates = 2;
  const Choice two = select_candidate(index, kDecode, r, supports, lt_heuristic_default(), {}, &three_skinny);
  EXPECT_EQ(two.candidate.id(), "own/skinny_1");
  ASSERT_EQ(two.trial_alternatives.size(), 1u);
  EXPECT_EQ(two.trial_alternatives[0].candidate.id(), "own/tf32_x");

  // A shape of another class is asked as before: the specialists have nothing for it.
  const Choice large = select_candidate(index, kUntuned, r, supports, lt_heuristic_default(), {}, &three_skinny);
  EXPECT_EQ(large.candidate.id(), "own/tf32_x");
  ASSERT_EQ(large.trial_alternatives.size(), 1u);
  EXPECT_EQ(large.trial_alternatives[0].candidate.id(), "own/tf32_a");

  // Without the trial nothing is timed, so nothing unmeasured is taken either.
  const Choice untried = select_candidate(index, kDecode, rules(), supports, lt_heuristic_default(), {}, &three_skinny);
  EXPECT_EQ(untried.source, ChoiceSource::Default) << untried.why;
  EXPECT_TRUE(untried.trial_alternatives.empty());
}

TEST(FallbackEvidence, ASkinnyVariantASweepMeasuredIsRankedWithTheOthersNotTakenAsUnmeasured) {
  const GemmProblem tuned_decode = test_problem(16, 2048, 512);
  const CacheIndex index({own_entry(tuned_decode, "skinny_1", margins(1.3, 1.3))}, kHere,
                         measured_at(tuned_decode, {{"skinny_1", 1.3}, {"tf32_x", 0.9}}));
  FakeChecks checks;
  SelectionRules r = rules();
  r.confirm_on_first_use = true;
  r.max_trial_candidates = 3;
  const Choice c = select_candidate(index, kDecode, r, checks.supports(), lt_heuristic_default(), {}, &three_skinny);
  ASSERT_EQ(c.trial_alternatives.size(), 2u) << c.why;
  EXPECT_EQ(c.candidate.id(), "own/skinny_2") << "unmeasured first";
  EXPECT_EQ(c.trial_alternatives[0].candidate.id(), "own/skinny_3");
  EXPECT_EQ(c.trial_alternatives[1].candidate.id(), "own/skinny_1") << "measured: ranked 1 of 2, in the last place";
  EXPECT_EQ(c.trial_alternatives[1].source.rfind("ranked 1 of 2: x1.30", 0), 0u) << c.trial_alternatives[1].source;
}

TEST(FallbackEvidence, ASkinnyVariantMeasuredOnlyWhereItsRowsDifferIsTriedAsUnmeasuredAndOnlyOnce) {
  // The sweep measured skinny_1 at 64 rows alone, where it ranks below tf32_x; the specialists say a time at 64 rows
  // does not place them at kDecode's 8.
  const GemmProblem tuned_wide = test_problem(64, 2048, 512);
  const CacheIndex index({own_entry(tuned_wide, "tf32_x", margins(1.3, 1.3))}, kHere,
                         measured_at(tuned_wide, {{"tf32_x", 1.3}, {"skinny_1", 0.7}}));
  const auto rows_alike = [](const GemmProblem& p) {
    Specialists s = three_skinny(p);
    s.ranked_by = [m = p.m](const GemmProblem& q) { return (q.m <= 16) == (m <= 16); };
    return s;
  };
  FakeChecks checks;
  SelectionRules r = rules();
  r.confirm_on_first_use = true;
  r.max_trial_candidates = 6;
  const Choice c = select_candidate(index, kDecode, r, checks.supports(), lt_heuristic_default(), {}, rows_alike);
  std::vector<std::string> tried = {c.candidate.id()};
  for (const Choice::Alternative& a : c.trial_alternatives) tried.push_back(a.candidate.id());
  EXPECT_EQ(tried, (std::vector<std::string>{"own/skinny_1", "own/skinny_2", "own/skinny_3", "own/tf32_x"}))
      << "the three specialists first, then the ranked tf32_x, and skinny_1 not again in its ranked place";
  EXPECT_NE(c.why.find("that no sweep measured at the kind's tuned shapes (3 tried here)"), std::string::npos)
      << c.why;

  // Without the rule the time at 64 rows ranks skinny_1, so it waits in its ranked place behind tf32_x.
  const Choice ranked = select_candidate(index, kDecode, r, checks.supports(), lt_heuristic_default(), {},
                                         &three_skinny);
  std::vector<std::string> order = {ranked.candidate.id()};
  for (const Choice::Alternative& a : ranked.trial_alternatives) order.push_back(a.candidate.id());
  EXPECT_EQ(order, (std::vector<std::string>{"own/skinny_2", "own/skinny_3", "own/tf32_x", "own/skinny_1"}));
}

TEST(FallbackEvidence, WithoutADbADecodeSizedProblemStillPutsTheSkinnyVariantsToTheTrial) {
  FakeChecks checks;
  SelectionRules r = rules();
  r.confirm_on_first_use = true;
  r.cache_note = "the db 'x.db' was not found";
  const Choice c =
      select_candidate(CacheIndex({}, kHere), kDecode, r, checks.supports(), lt_heuristic_default(), {}, &three_skinny);
  EXPECT_EQ(c.source, ChoiceSource::Nearest) << c.why;
  EXPECT_EQ(c.candidate.id(), "own/skinny_1");
  EXPECT_EQ(c.trial_alternatives.size(), 2u);
  EXPECT_NE(c.why.find("tuned shapes (3 tried here); the db 'x.db' was not found"), std::string::npos) << c.why;

  const Choice large =
      select_candidate(CacheIndex({}, kHere), kAsked, r, checks.supports(), lt_heuristic_default(), {}, &three_skinny);
  EXPECT_EQ(large.source, ChoiceSource::Default) << "no specialist, no measurement: the default, as before";
  EXPECT_NE(large.why.find("because the db 'x.db' was not found"), std::string::npos) << large.why;
}

// A GPU-free TwinChooser: "<v>" and "<v>_staged" are twins, staged exactly where the problem's k is not a multiple of 4
// (what kernels::alignment_twin decides from the operands' leading dimensions).
Candidate fake_alignment_twin(const GemmProblem& p, const Candidate& c) {
  const std::string suffix = "_staged";
  std::string plain = c.own_variant;
  if (plain.size() > suffix.size() && plain.compare(plain.size() - suffix.size(), suffix.size(), suffix) == 0)
    plain.resize(plain.size() - suffix.size());
  Candidate twin = c;
  twin.own_variant = p.k % 4 ? plain + suffix : plain;
  return twin;
}

// Tuned shapes choose a tile; whether it runs staged is the asked problem's alignment: a variant chosen at aligned
// shapes stands in for an unaligned one as its staged twin (and back), the neighbours agree across twins, a trial
// tries the twin, and explain() says so.
TEST(FallbackEvidence, AStandInRunsAsTheTwinItsOwnAlignmentAsksFor) {
  FakeChecks checks;
  const GemmProblem unaligned = test_problem(1000, 1000, 961);
  const CacheIndex index({own_entry(kTuned, "wgmma_a", margins(1.25, 1.15)),
                          own_entry(test_problem(1100, 1100, 999), "wgmma_a_staged", margins(1.3, 1.2))},
                         kHere);
  const Choice c = select_candidate(index, unaligned, rules(), checks.supports(), lt_heuristic_default(),
                                    &fake_alignment_twin);
  EXPECT_EQ(c.source, ChoiceSource::Nearest) << c.why;
  EXPECT_EQ(c.candidate.id(), "own/wgmma_a_staged");
  EXPECT_NE(c.why.find("stands in as its twin own/wgmma_a_staged (staged or not"), std::string::npos) << c.why;
  EXPECT_EQ(checks.checked.back(), "own/wgmma_a_staged") << "the twin is what is re-checked";

  const Choice aligned = select_candidate(index, kUntuned, rules(), checks.supports(), lt_heuristic_default(),
                                          &fake_alignment_twin);
  EXPECT_EQ(aligned.candidate.id(), "own/wgmma_a") << aligned.why;
  EXPECT_EQ(aligned.why.find("as its twin"), std::string::npos) << "the nearest chose it as it is: " << aligned.why;

  SelectionRules r = rules();
  r.confirm_on_first_use = true;
  const Choice tried = select_candidate(index, unaligned, r, checks.supports(), lt_heuristic_default(),
                                        &fake_alignment_twin);
  EXPECT_EQ(tried.candidate.id(), "own/wgmma_a_staged");
  EXPECT_TRUE(tried.trial_alternatives.empty()) << "both neighbours' choices are one variant here";

  // Without a chooser the candidates are taken as they are, and the two names disagree.
  const Choice as_stored = select_candidate(index, unaligned, rules(), checks.supports(), lt_heuristic_default());
  EXPECT_EQ(as_stored.source, ChoiceSource::Default) << as_stored.why;
  EXPECT_NE(as_stored.why.find("disagree"), std::string::npos) << as_stored.why;
}

// An fp32 cache whose 2048³ entry is a 3xtf32 variant the fp32-equivalent policy admitted, next to a plain fp32 one.
CacheIndex policy_cache() {
  CacheEntry admitted = test_entry(kHere, test_problem(2048, 2048, 2048, MathMode::Fp32), 0, 700);
  admitted.candidate = Candidate{};
  admitted.candidate.backend = Backend::Own;
  admitted.candidate.own_variant = "3xtf32_128x64x64_w64x32_s2";
  admitted.verify_error = 4.5e-7;
  admitted.fp32_equivalent = true;
  return CacheIndex({admitted, test_entry(kHere, test_problem(2048, 2048, 1024, MathMode::Fp32), 7, 600)}, kHere);
}

TEST(Selection, AnAdmittedFp32EquivalentEntryIsPassedOverWhileTheRuntimeOptionIsOff) {
  FakeChecks checks;
  const GemmProblem asked = test_problem(2048, 2048, 2048, MathMode::Fp32);
  const Choice c = select_candidate(policy_cache(), asked, rules(), checks.supports(), heuristic_default());
  EXPECT_EQ(c.source, ChoiceSource::Nearest);
  EXPECT_EQ(c.candidate.lt.algo_id, 7) << "the plain fp32 entry nearby, never the 3xtf32 one";
  EXPECT_NE(c.why.find("RuntimeOptions::fp32_equivalent is off"), std::string::npos) << c.why;
}

TEST(Selection, AnAdmittedFp32EquivalentEntryIsUsedWhenTheRuntimeAllowsItAndExplainSaysSo) {
  FakeChecks checks;
  SelectionRules r = rules();
  r.fp32_equivalent = true;
  const GemmProblem asked = test_problem(2048, 2048, 2048, MathMode::Fp32);
  const Choice c = select_candidate(policy_cache(), asked, r, checks.supports(), heuristic_default());
  EXPECT_EQ(c.source, ChoiceSource::Exact);
  EXPECT_EQ(c.candidate.id(), "own/3xtf32_128x64x64_w64x32_s2");
  EXPECT_NE(c.why.find("admitted by the fp32-equivalent policy (error 4.5e-07"), std::string::npos) << c.why;
}

TEST(Selection, AnAdmittedEntryStandsInOnlyForShapesWithNoLongerK) {
  FakeChecks checks;
  SelectionRules r = rules();
  r.fp32_equivalent = true;
  const Choice shorter = select_candidate(policy_cache(), test_problem(2000, 2048, 2048, MathMode::Fp32), r,
                                          checks.supports(), heuristic_default());
  EXPECT_EQ(shorter.candidate.id(), "own/3xtf32_128x64x64_w64x32_s2") << shorter.why;
  const Choice longer = select_candidate(policy_cache(), test_problem(2048, 2048, 2500, MathMode::Fp32), r,
                                         checks.supports(), heuristic_default());
  EXPECT_EQ(longer.candidate.lt.algo_id, 7) << longer.why;
  EXPECT_NE(longer.why.find("measured its accuracy at k = 2048 only"), std::string::npos) << longer.why;
}

}  // namespace
}  // namespace gemmtune::runtime
