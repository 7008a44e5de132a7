#include "problem/candidate_choice.hpp"

namespace gemmtune {

const MeasurementRecord* heuristic_first(const std::vector<MeasurementRecord>& records) {
  for (const MeasurementRecord& r : records)
    if (r.status == MeasureStatus::Ok && r.candidate.backend == Backend::Lt && r.candidate.heuristic_rank == 0)
      return &r;
  return nullptr;
}

const MeasurementRecord* chosen_candidate(const std::vector<MeasurementRecord>& records) {
  const MeasurementRecord* fastest = nullptr;
  for (const MeasurementRecord& r : records)
    if (r.status == MeasureStatus::Ok && (!fastest || r.stats.median_us < fastest->stats.median_us)) fastest = &r;
  const MeasurementRecord* first = heuristic_first(records);
  if (first && first->stats.median_us <= fastest->stats.median_us * (1 + kChoiceTieBand)) return first;
  return fastest;
}

}  // namespace gemmtune
