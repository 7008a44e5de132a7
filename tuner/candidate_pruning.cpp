#include "tuner/candidate_pruning.hpp"

#include <algorithm>
#include <cstdio>

#include "common/error.hpp"
#include "problem/candidate_choice.hpp"

namespace gemmtune {

PruneVerdict first_batch_verdict(const TimingStats& first_batch, double best_us, double margin) {
  PruneVerdict v;
  if (first_batch.samples == 0 || best_us <= 0 || first_batch.min_us <= best_us * (1 + margin)) return v;
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%s: fastest of %d first-batch calls %.2f us > %.2f x best median so far %.2f us",
                kPrunedFirstBatch, first_batch.samples, first_batch.min_us, 1 + margin, best_us);
  v.stopped_by = kPrunedFirstBatch;
  v.reason = buf;
  return v;
}

std::vector<std::size_t> sampling_order(const std::vector<TimingStats>& first_batches) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < first_batches.size(); ++i)
    if (first_batches[i].samples > 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return first_batches[a].min_us < first_batches[b].min_us;
  });
  return order;
}

SamplingCounts sample_or_prune(std::vector<MeasurementRecord>& records, const std::vector<TimingStats>& first_batches,
                               bool prune, const std::function<TimingStats(const MeasurementRecord&)>& sample) {
  std::vector<std::size_t> order;
  if (prune) {
    order = sampling_order(first_batches);
  } else {
    for (std::size_t i = 0; i < records.size(); ++i) order.push_back(i);
  }
  const MeasurementRecord* first = heuristic_first(records);
  SamplingCounts counts;
  double best_us = 0;
  for (const std::size_t i : order) {
    MeasurementRecord& r = records[i];
    if (r.status != MeasureStatus::Ok) continue;
    const PruneVerdict verdict = prune && &r != first ? first_batch_verdict(first_batches[i], best_us) : PruneVerdict{};
    if (verdict.pruned()) {
      r.stats = first_batches[i];
      r.stats.stopped_by = verdict.stopped_by;
      r.message = verdict.reason;
      ++counts.pruned;
      continue;
    }
    try {
      r.stats = sample(r);
      best_us = best_us > 0 ? std::min(best_us, r.stats.median_us) : r.stats.median_us;
      ++counts.sampled;
    } catch (const Error& e) {
      r.status = MeasureStatus::Error;
      r.message = e.what();
    }
  }
  return counts;
}

std::vector<const MeasurementRecord*> finalists_within_reach(const std::vector<const MeasurementRecord*>& finalists) {
  if (finalists.empty()) return {};
  const double heuristic_per_call = finalists.front()->stats.events_per_call_us;
  if (heuristic_per_call <= 0) return finalists;
  std::vector<const MeasurementRecord*> out = {finalists.front()};
  for (std::size_t i = 1; i < finalists.size(); ++i)
    if (finalists[i]->stats.median_us < heuristic_per_call * (1 + kFinalistReachSlack)) out.push_back(finalists[i]);
  return out;
}

}  // namespace gemmtune
