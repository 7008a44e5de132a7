// The pruning rules on synthetic timings: what they prune, what they never prune, that every verdict is recorded on
// its record, and that on any timings they leave the chosen candidate and the finalists as sampling everything would.
#include "tuner/candidate_pruning.hpp"

#include <algorithm>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "problem/candidate_choice.hpp"
#include "support/tuning_fixtures.hpp"

namespace gemmtune {
namespace {

TimingStats batch_with_fastest(double fastest_us, int calls = 5) {
  TimingStats s = test::test_stats(fastest_us * 1.02);
  s.min_us = fastest_us;
  s.p10_us = fastest_us * 1.01;
  s.samples = calls;
  return s;
}

// Heuristic-first (cuBLASLt rank 0) and the own variants v0, v1, ... of one problem, all verified.
std::vector<MeasurementRecord> verified_candidates(int own) {
  const GemmProblem p = test::test_problem(1024, 1024, 1024);
  std::vector<MeasurementRecord> records;
  for (int i = 0; i < own; ++i) records.push_back(test::own_record(p, "v" + std::to_string(i), 0));
  MeasurementRecord first = test::lt_record(p, 5, 0);
  first.candidate.heuristic_rank = 0;
  records.push_back(first);
  for (MeasurementRecord& r : records) r.stats = {};
  return records;
}

TEST(CandidatePruning, FirstBatchPrunesOnlyACandidateWhoseFastestCallIsBeyondTheMarginOverTheBest) {
  EXPECT_TRUE(first_batch_verdict(batch_with_fastest(120.1), 100.0).pruned());
  EXPECT_FALSE(first_batch_verdict(batch_with_fastest(119.9), 100.0).pruned());
  EXPECT_FALSE(first_batch_verdict(batch_with_fastest(500), 0).pruned()) << "nothing converged yet: no bound";
  EXPECT_FALSE(first_batch_verdict(TimingStats{}, 100.0).pruned()) << "no first batch";
  const PruneVerdict v = first_batch_verdict(batch_with_fastest(150), 100.0);
  EXPECT_EQ(v.stopped_by, "pruned: first_batch");
  EXPECT_NE(v.reason.find("150.00 us > 1.20 x best median so far 100.00 us"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("5 first-batch calls"), std::string::npos) << v.reason;
}

TEST(CandidatePruning, CandidatesAreSampledFastestFirstBatchFirstTiesInCandidateOrderUnverifiedLeftOut) {
  const std::vector<TimingStats> batches = {batch_with_fastest(30), TimingStats{}, batch_with_fastest(10),
                                            batch_with_fastest(30), batch_with_fastest(20)};
  EXPECT_EQ(sampling_order(batches), (std::vector<std::size_t>{2, 4, 0, 3}));
}

TEST(CandidatePruning, SlowCandidatesKeepTheirFirstBatchMarkedPrunedHeuristicFirstIsAlwaysSampled) {
  std::vector<MeasurementRecord> records = verified_candidates(4);
  records[3].status = MeasureStatus::VerifyFailed;  // never sampled, never pruned
  // First batches: v0 10 us, v1 11 us, v2 30 us (pruned), v3 failed, heuristic-first 40 us (slow, yet sampled).
  const std::vector<TimingStats> batches = {batch_with_fastest(10), batch_with_fastest(11), batch_with_fastest(30),
                                            TimingStats{}, batch_with_fastest(40)};
  const std::vector<double> converged = {10.5, 11.2, 31.0, 0, 41.0};
  std::vector<std::string> sampled;
  const SamplingCounts counts = sample_or_prune(records, batches, true, [&](const MeasurementRecord& r) {
    sampled.push_back(r.candidate.id());
    TimingStats s = test::test_stats(converged[static_cast<std::size_t>(&r - records.data())]);
    s.stopped_by = "converged";
    return s;
  });
  EXPECT_EQ(counts.sampled, 3);
  EXPECT_EQ(counts.pruned, 1);
  EXPECT_EQ(sampled, (std::vector<std::string>{records[0].candidate.id(), records[1].candidate.id(),
                                                records[4].candidate.id()}));
  EXPECT_EQ(records[2].stats.stopped_by, "pruned: first_batch");
  EXPECT_EQ(records[2].stats.median_us, batches[2].median_us) << "a pruned record keeps its first batch's statistics";
  EXPECT_EQ(records[2].stats.samples, 5);
  EXPECT_EQ(records[2].message.rfind("pruned: first_batch: ", 0), 0u) << records[2].message;
  EXPECT_EQ(records[2].status, MeasureStatus::Ok);
  EXPECT_EQ(records[4].stats.median_us, 41.0);
  EXPECT_EQ(records[4].stats.stopped_by, "converged");
  EXPECT_EQ(records[3].status, MeasureStatus::VerifyFailed);
  EXPECT_EQ(records[3].stats.samples, 0);
}

TEST(CandidatePruning, WithoutPruningEveryVerifiedCandidateIsSampledInCandidateOrder) {
  std::vector<MeasurementRecord> records = verified_candidates(3);
  const std::vector<TimingStats> none(records.size());
  std::vector<std::string> sampled;
  const SamplingCounts counts = sample_or_prune(records, none, false, [&](const MeasurementRecord& r) {
    sampled.push_back(r.candidate.id());
    return test::test_stats(100.0 * static_cast<double>(sampled.size()));
  });
  EXPECT_EQ(counts.sampled, 4);
  EXPECT_EQ(counts.pruned, 0);
  ASSERT_EQ(sampled.size(), records.size());
  for (std::size_t i = 0; i < records.size(); ++i) EXPECT_EQ(sampled[i], records[i].candidate.id());
}

TEST(CandidatePruning, AFailedSampleMarksItsRecordAnErrorAndTheRestGoOn) {
  std::vector<MeasurementRecord> records = verified_candidates(2);
  const std::vector<TimingStats> batches = {batch_with_fastest(10), batch_with_fastest(11), batch_with_fastest(12)};
  const SamplingCounts counts = sample_or_prune(records, batches, true, [&](const MeasurementRecord& r) {
    if (&r == &records[0]) throw CheckError("cuBLASLt said no");
    return test::test_stats(11.5);
  });
  EXPECT_EQ(records[0].status, MeasureStatus::Error);
  EXPECT_NE(records[0].message.find("cuBLASLt said no"), std::string::npos);
  EXPECT_EQ(counts.sampled, 2);
}

// Random problems: true medians spread over 1-3x the fastest, first batches whose fastest call lies between 2%
// below and 5% above the true median (a short batch's minimum). Pruned or not, the ranking must choose the same
// candidate and the finalist stage must see the same finalists as when every candidate is sampled.
TEST(CandidatePruning, OnRandomTimingsPruningNeverChangesTheChoiceOrTheFinalists) {
  std::mt19937_64 rng(20261127);
  std::uniform_real_distribution<double> spread(1.0, 3.0), batch_offset(-0.02, 0.05), coin(0, 1);
  int pruned_total = 0;
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<MeasurementRecord> records = verified_candidates(12);
    std::vector<double> median(records.size());
    std::vector<TimingStats> batches(records.size());
    for (std::size_t i = 0; i < records.size(); ++i) {
      // A third of the candidates near the fastest, the rest anywhere up to 3x.
      median[i] = 10.0 * (coin(rng) < 0.3 ? 1.0 + 0.15 * coin(rng) : spread(rng));
      batches[i] = batch_with_fastest(median[i] * (1 + batch_offset(rng)));
    }
    std::vector<MeasurementRecord> all = records, some = records;
    const auto true_median_in = [&](const std::vector<MeasurementRecord>& rs) {
      return [&](const MeasurementRecord& r) {
        return test::test_stats(median[static_cast<std::size_t>(&r - rs.data())]);
      };
    };
    sample_or_prune(all, batches, false, true_median_in(all));
    pruned_total += sample_or_prune(some, batches, true, true_median_in(some)).pruned;
    ASSERT_EQ(chosen_candidate(all)->candidate.id(), chosen_candidate(some)->candidate.id()) << "trial " << trial;
    std::set<std::string> fin_all, fin_some;
    for (const MeasurementRecord* r : finalists(all, 3, 0.10)) fin_all.insert(r->candidate.id());
    for (const MeasurementRecord* r : finalists(some, 3, 0.10)) fin_some.insert(r->candidate.id());
    ASSERT_EQ(fin_all, fin_some) << "trial " << trial;
  }
  EXPECT_GT(pruned_total, 500 * 12 / 3) << "the rule must prune the clearly slower half of these candidates";
}

TEST(CandidatePruning, OnlyChallengersFasterThanHeuristicFirstsEndToEndTimePlusItsNoiseAreWithinReach) {
  std::vector<MeasurementRecord> records = verified_candidates(4);
  records[4].stats = test::test_stats(105);
  records[4].stats.events_per_call_us = 110;
  const double medians[] = {100, 112.1, 112.3, 130};  // the reach: 110 us end to end, plus 2% for its noise
  for (int i = 0; i < 4; ++i) records[static_cast<std::size_t>(i)].stats = test::test_stats(medians[i]);
  const std::vector<const MeasurementRecord*> fin = {&records[4], &records[0], &records[1], &records[2], &records[3]};
  EXPECT_EQ(finalists_within_reach(fin),
            (std::vector<const MeasurementRecord*>{&records[4], &records[0], &records[1]}));
  records[4].stats.events_per_call_us = 0;  // not measured: every challenger stays
  EXPECT_EQ(finalists_within_reach(fin), fin);
  EXPECT_TRUE(finalists_within_reach({}).empty());
}

}  // namespace
}  // namespace gemmtune
