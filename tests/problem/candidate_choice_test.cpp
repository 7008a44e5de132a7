#include "problem/candidate_choice.hpp"

#include <gtest/gtest.h>

namespace gemmtune {
namespace {

MeasurementRecord lt_record(int rank, int algo_id, double median_us, MeasureStatus status = MeasureStatus::Ok) {
  MeasurementRecord r;
  r.candidate.backend = Backend::Lt;
  r.candidate.lt.algo_id = algo_id;
  r.candidate.heuristic_rank = rank;
  r.status = status;
  r.stats.median_us = median_us;
  return r;
}

MeasurementRecord own_record(const std::string& variant, double median_us) {
  MeasurementRecord r;
  r.candidate.backend = Backend::Own;
  r.candidate.own_variant = variant;
  r.stats.median_us = median_us;
  return r;
}

TEST(CandidateChoice, TheFastestWinsWhenTheHeuristicsFirstIsSlowerThanTheTieBand) {
  const std::vector<MeasurementRecord> records = {lt_record(0, 21, 10.0), lt_record(1, 43, 9.5),
                                                  own_record("tf32_a", 9.8)};
  ASSERT_NE(chosen_candidate(records), nullptr);
  EXPECT_EQ(chosen_candidate(records), &records[1]);
}

TEST(CandidateChoice, TheHeuristicsFirstIsKeptWhenWithinTheTieBandOfTheFastest) {
  const double fastest = 100.0, first = fastest * (1 + kChoiceTieBand) - 0.01;
  const std::vector<MeasurementRecord> records = {lt_record(0, 21, first), own_record("tf32_a", fastest)};
  EXPECT_EQ(chosen_candidate(records), &records[0]);
}

TEST(CandidateChoice, TheFirstOkRankZeroRecordIsTheHeuristicsFirstAndFailedOnesAreNeverChosen) {
  // The fused heuristic's rank 0 failed verification; the unfused baseline's rank 0 is the first verified one.
  const std::vector<MeasurementRecord> records = {lt_record(0, 21, 5.0, MeasureStatus::VerifyFailed),
                                                  lt_record(0, 43, 10.0), lt_record(0, 55, 9.0),
                                                  own_record("tf32_a", 9.95)};
  EXPECT_EQ(heuristic_first(records), &records[1]);
  EXPECT_EQ(chosen_candidate(records), &records[2]);
}

TEST(CandidateChoice, NothingIsChosenWithoutAVerifiedRecord) {
  const std::vector<MeasurementRecord> records = {lt_record(0, 21, 5.0, MeasureStatus::Error),
                                                  lt_record(1, 43, 4.0, MeasureStatus::Unsupported)};
  EXPECT_EQ(heuristic_first(records), nullptr);
  EXPECT_EQ(chosen_candidate(records), nullptr);
  EXPECT_EQ(chosen_candidate({}), nullptr);
}

}  // namespace
}  // namespace gemmtune
