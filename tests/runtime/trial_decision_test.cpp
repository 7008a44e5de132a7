#include "runtime/trial_decision.hpp"

#include <array>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace gemmtune::runtime {
namespace {

// Per-call times in the trial's four conditions: stream warm, stream cold, graph warm, graph cold.
using FourUs = std::array<double, 4>;

// A challenger's trial where every batch ran at its median: `mine` against heuristic-first's `theirs` in its pairs.
ProgramTrial trial_of(const FourUs& mine, const FourUs& theirs, bool by_median) {
  ProgramTrial t;
  TrialResult* conditions[] = {&t.warm, &t.cold, &t.graph, &t.graph_cold};
  for (std::size_t c = 0; c < 4; ++c)
    *conditions[c] = TrialResult{mine[c], theirs[c], mine[c], theirs[c]};
  t.own_pairs = by_median;
  t.by_median = by_median;
  return t;
}

constexpr FourUs kHeuristicFirstUs = {30, 40, 29, 39};

// What cuBLAS and cuBLASLt offer in the runtime's place (the no-entry set): judged by median in its own pairs.
TrialChallenger no_entry(const std::string& id, const FourUs& us, bool eager = false) {
  return {Candidate::parse_id(id), id, true, trial_of(us, kHeuristicFirstUs, true), "its trial", false, eager};
}

// One of our own variants: judged against heuristic-first's fastest batches with the 1% floor.
TrialChallenger own(const std::string& id, const FourUs& us) {
  return {Candidate::parse_id(id), id, false, trial_of(us, kHeuristicFirstUs, false), "its trial", false, false};
}

FourUs scaled(const FourUs& ratios) {
  FourUs us;
  for (std::size_t c = 0; c < 4; ++c) us[c] = kHeuristicFirstUs[c] * ratios[c];
  return us;
}

const std::string kHeuristicFirst = "lt/a55-t14-s31-k2-r0-w0-c0-cl0-i0";
const std::string kSplitKBias = "lt/a55-t14-s31-k2-r0-w0-c0-cl0-i0+bias";
const std::string kEagersCall = "lt/a55-t12-s31-k1-r0-w0-c0-cl0-i0+bias";
const std::string kOwnEntry = "own/tf32_128x128x32_s3";

TrialSetting setting(std::optional<std::string> eager) {
  TrialSetting s;
  s.heuristic_first = {Candidate::parse_id(kHeuristicFirst), "cuBLASLt heuristic's first algo", true};
  if (eager) s.eager = Candidate::parse_id(*eager);
  s.cost = "; this first use took 1.0 ms";
  return s;
}

// What the runtime would run before the trial: `id`, from `source`, the why the trial's text follows.
Choice choice_of(const std::string& id, ChoiceSource source) {
  Choice c;
  c.candidate = Candidate::parse_id(id);
  c.source = source;
  c.why = source == ChoiceSource::Exact ? "exact cache hit" : "cuBLASLt heuristic default";
  return c;
}
Choice no_entry_default() { return choice_of(kHeuristicFirst, ChoiceSource::Default); }

bool says(const Choice& c, const std::string& words) { return c.why.find(words) != std::string::npos; }

// 3009x136x755 bias+gelu fp32 (H100 and H200): the split-k with cuBLASLt's bias is 20% faster than heuristic-first
// cold and level warm; eager's call is 4% faster warm and 30% slower cold, so by the sum over the four the split-k won.
const FourUs kSplitKRatios = {1.00, 0.80, 1.00, 0.85};
const FourUs kEagerRatios = {0.96, 1.30, 0.99, 1.25};

TEST(TrialDecision, AWinnerMoreThanTwoAndAHalfPercentBehindEagersCallInStreamWarmGivesWayToEagersCall) {
  Choice choice = no_entry_default();
  decide_after_trial({no_entry(kSplitKBias, scaled(kSplitKRatios)), no_entry(kEagersCall, scaled(kEagerRatios), true)},
                     setting(kEagersCall), choice);
  EXPECT_EQ(choice.candidate.id(), kEagersCall) << choice.why;
  EXPECT_EQ(choice.source, ChoiceSource::Default);
  EXPECT_TRUE(says(choice, "ran 4.2% slower than PyTorch eager's own call (" + kEagersCall + ") in stream warm"))
      << choice.why;
  EXPECT_TRUE(says(choice, "runs as PyTorch eager's own call")) << choice.why;
}

TEST(TrialDecision, AWinnerWithinTheLimitOfEagersCallRunsAsTheTrialChoseIt) {
  Choice choice = no_entry_default();
  const FourUs eager_level_warm = {0.99, 1.30, 0.99, 1.25};
  decide_after_trial({no_entry(kSplitKBias, scaled(kSplitKRatios)),
                      no_entry(kEagersCall, scaled(eager_level_warm), true)},
                     setting(kEagersCall), choice);
  EXPECT_EQ(choice.candidate.id(), kSplitKBias) << choice.why;
  EXPECT_FALSE(says(choice, "slower than PyTorch eager's own call")) << choice.why;
}

TEST(TrialDecision, WithoutEagersCallKnownTheFastestWinnerOverTheFourConditionsRuns) {
  Choice choice = no_entry_default();
  decide_after_trial({no_entry(kSplitKBias, scaled(kSplitKRatios)), no_entry(kEagersCall, scaled(kEagerRatios))},
                     setting(std::nullopt), choice);
  EXPECT_EQ(choice.candidate.id(), kSplitKBias) << choice.why;
}

Choice own_entry_choice() { return choice_of(kOwnEntry, ChoiceSource::Exact); }

TrialSetting own_entry_setting(std::optional<std::string> eager) {
  TrialSetting s = setting(std::move(eager));
  s.exact = true;
  s.own_entry = true;
  return s;
}

TEST(TrialDecision, WhereEagersCallIsHeuristicFirstAndItSetsAnOwnEntryAsideHeuristicFirstRuns) {
  Choice choice = own_entry_choice();
  // The entry: 5% slower than heuristic-first from a warm stream, 20% faster cold; its near-tie loses.
  decide_after_trial({own(kOwnEntry, scaled({1.05, 0.80, 1.00, 0.85})),
                      own("own/tf32_128x128x32_s4", scaled({1.10, 1.10, 1.10, 1.10}))},
                     own_entry_setting(kHeuristicFirst), choice);
  EXPECT_EQ(choice.candidate.id(), kHeuristicFirst) << choice.why;
  EXPECT_TRUE(says(choice, "heuristic-first, which is PyTorch eager's own call here, by the eager limit"))
      << choice.why;
}

TEST(TrialDecision, AnOwnEntryWithinTheLimitStandsAndEagersCallBesideItIsNeverItselfAWinner) {
  Choice choice = own_entry_choice();
  // Eager's call, timed as the measure only: faster than the entry in every condition, and still not what runs.
  decide_after_trial({own(kOwnEntry, scaled({0.98, 0.80, 0.97, 0.85})),
                      own("own/tf32_128x128x32_s4", scaled({1.10, 1.10, 1.10, 1.10})),
                      no_entry(kEagersCall, scaled({0.97, 0.79, 0.96, 0.84}), true)},
                     own_entry_setting(kEagersCall), choice);
  EXPECT_EQ(choice.candidate.id(), kOwnEntry) << choice.why;
  EXPECT_TRUE(says(choice, kEagersCall + " was timed beside them")) << choice.why;
}

TEST(TrialDecision, AnOwnEntryNotTimedInEveryConditionLeavesTheLimitAloneInsteadOfThrowing) {
  Choice choice = own_entry_choice();
  TrialChallenger entry = own(kOwnEntry, scaled({1.05, 0.80, 1.00, 0.85}));
  entry.times->graph_cold.batches = 0;  // the budget ran out before it
  entry.out_of_budget = true;
  decide_after_trial({entry, own("own/tf32_128x128x32_s4", scaled({1.10, 1.10, 1.10, 1.10}))},
                     own_entry_setting(kHeuristicFirst), choice);
  EXPECT_EQ(choice.candidate.id(), kOwnEntry) << choice.why;
  EXPECT_TRUE(says(choice, "so the sweep's choice stands")) << choice.why;
}

TEST(TrialDecision, AnExactEntryOutOfBudgetDoesNotStandWhereTheEagerLimitSetTheWinnerAside) {
  // An exact entry that is one of the no-entry set, its trial cut short by the budget; the winner trails eager's
  // call by 5% warm, heuristic-first does not: heuristic-first runs, not the entry the trial never finished timing.
  Choice choice = choice_of("cublas/sgemm", ChoiceSource::Exact);
  TrialChallenger entry = no_entry("cublas/sgemm", scaled({1.00, 1.00, 1.00, 1.00}));
  entry.times->graph.batches = entry.times->graph_cold.batches = 0;
  entry.out_of_budget = true;
  TrialSetting s = setting(kEagersCall);
  s.exact = true;
  decide_after_trial({entry, no_entry(kSplitKBias, scaled({1.05, 0.70, 1.00, 0.80})),
                      no_entry(kEagersCall, scaled({1.00, 1.30, 1.00, 1.25}), true)},
                     s, choice);
  EXPECT_EQ(choice.candidate.id(), kHeuristicFirst) << choice.why;
  EXPECT_TRUE(says(choice, "so heuristic-first runs")) << choice.why;
  EXPECT_FALSE(says(choice, "the trial's budget ran out before it had timed the entry in full")) << choice.why;
}

// Two winners: the split-k runs by its sum over the four conditions; `other` is 5% faster than it from a graph in
// absolute time, where its own pairs' heuristic-first ran faster still, so it trails heuristic-first there by 5.6%.
std::vector<TrialChallenger> graph_trade() {
  TrialChallenger other = no_entry("lt/a21-t20-s11-k1-r0-w0-c0-cl0-i0+bias", {36, 48, 27.55, 37.05});
  other.times->warm.default_us = other.times->warm.default_fastest_us = 45;
  other.times->cold.default_us = other.times->cold.default_fastest_us = 60;
  other.times->graph.default_us = other.times->graph.default_fastest_us = 26.1;
  other.times->graph_cold.default_us = other.times->graph_cold.default_fastest_us = 35.1;
  return {no_entry(kSplitKBias, {30, 32, 29, 39}), other};
}

TEST(TrialDecision, InsideACaptureAWinnerFasterFromAGraphRunsInstead) {
  Choice choice = no_entry_default();
  decide_after_trial(graph_trade(), setting(std::nullopt), choice);
  EXPECT_EQ(choice.candidate.id(), kSplitKBias) << choice.why;
  ASSERT_TRUE(choice.in_graph) << choice.why;
  EXPECT_EQ(choice.in_graph->id(), "lt/a21-t20-s11-k1-r0-w0-c0-cl0-i0+bias");
}

TEST(TrialDecision, InsideACaptureAWinnerBeyondTheLimitBehindEagersCallFromAGraphIsNotWhatRuns) {
  Choice choice = no_entry_default();
  std::vector<TrialChallenger> tried = graph_trade();
  tried.push_back(no_entry(kEagersCall, scaled({1.00, 1.20, 1.00, 1.00}), true));
  decide_after_trial(tried, setting(kEagersCall), choice);
  EXPECT_EQ(choice.candidate.id(), kSplitKBias) << choice.why;
  EXPECT_FALSE(choice.in_graph) << choice.why;
}

std::vector<std::string> ids_of(const std::vector<TrialChallenger>& tried) {
  std::vector<std::string> ids;
  for (const TrialChallenger& t : tried) ids.push_back(t.candidate.id() + (t.eager ? " eager" : ""));
  return ids;
}

TEST(TrialChallengers, AStandInGoesFirstThenWhatCuBLASOffersWithEagersCallMarkedThenItsAlternatives) {
  Choice choice = choice_of(kOwnEntry, ChoiceSource::Nearest);
  choice.trial_alternatives = {{Candidate::parse_id("own/tf32_128x128x32_s4"), "ranked 2 of 40"}};
  TrialSetting s = setting(kEagersCall);
  s.had_standin = true;
  const std::vector<TrialChallenger> tried = trial_challengers(
      choice, s, {Candidate::parse_id(kSplitKBias), Candidate::parse_id(kEagersCall)}, {});
  EXPECT_EQ(ids_of(tried), (std::vector<std::string>{kOwnEntry, kSplitKBias, kEagersCall + " eager",
                                                     "own/tf32_128x128x32_s4"}));
  EXPECT_FALSE(tried[0].no_entry);
  EXPECT_TRUE(tried[1].no_entry);
  EXPECT_NE(tried[3].name.find("ranked 2 of 40"), std::string::npos) << tried[3].name;
}

TEST(TrialChallengers, AnOwnEntryIsTimedBesideEagersCallAndItsNearTiesButBesideNoOtherOfWhatCuBLASOffers) {
  const std::vector<RankedVariant> rivals = {{Candidate::parse_id("own/tf32_128x128x32_s4"), 1.07, 3}};
  const std::vector<TrialChallenger> tried =
      trial_challengers(own_entry_choice(), own_entry_setting(kEagersCall), {}, rivals);
  EXPECT_EQ(ids_of(tried), (std::vector<std::string>{kOwnEntry, kEagersCall + " eager", "own/tf32_128x128x32_s4"}));
  EXPECT_NE(tried[2].name.find("x1.07 over heuristic-first"), std::string::npos) << tried[2].name;
  // Where eager's call is heuristic-first, every pair times it already.
  EXPECT_EQ(ids_of(trial_challengers(own_entry_choice(), own_entry_setting(kHeuristicFirst), {}, rivals)),
            (std::vector<std::string>{kOwnEntry, "own/tf32_128x128x32_s4"}));
}

TEST(TrialDecision, ATrialOfNoChallengerIsRefused) {
  Choice choice = no_entry_default();
  EXPECT_THROW(decide_after_trial({}, setting(std::nullopt), choice), CheckError);
}

TEST(TrialDecision, TheTimesTextNamesOnlyTheConditionsReached) {
  ProgramTrial t = trial_of({12.1, 14, 11, 13}, {13.02, 15, 12, 14}, false);
  t.graph.batches = t.graph_cold.batches = 0;
  EXPECT_EQ(trial_times_text(t),
            "stream warm 12.10 us per call (slowest batch 12.10) vs heuristic-first 13.02 us (fastest batch 13.02), "
            "stream cold 14.00 (slowest 14.00) vs 15.00 (fastest 15.00)");
}

}  // namespace
}  // namespace gemmtune::runtime
