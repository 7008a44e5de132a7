// Where a sweep spends no sampling: the rules that stop timing a candidate or a finalist once it can no longer change
// what the cache keeps (TimingSettings::prune; a profile that compares candidates side by side turns them off).
// Each rule that acts is recorded on the record it acted on, so every choice can be audited.
//
// First batch (after PyTorch TunableOp, which stops timing an instance once it is clearly slower than the best): every
// verified candidate first runs one short batch, its warm-up calls timed. Then the candidates are sampled to
// convergence fastest first by that batch, and one whose fastest first-batch call is more than kFirstBatchMargin
// slower than the best median sampled so far stops there: its record keeps the first batch's statistics, with
// TimingStats::stopped_by "pruned: first_batch". It cannot change the choice: the ranking keeps the fastest median
// (or heuristic-first within 1% of it) and the finalist stage looks only at candidates within 10% of the fastest
// (problem/candidate_choice.hpp), while every call of this one was at least 20% slower than a median already
// measured. The bound only falls as more candidates converge, so no later candidate makes a pruned one a contender.
// Heuristic-first is never pruned: every speedup the sweep, the report and the runtime state is measured against it.
//
// Finalist reach: the finalist stage replaces heuristic-first only by a challenger that beats it beyond 2% in every
// program condition, "stream/cold" among them (back-to-back calls in a stream, inputs rotating past L2: the ranking's
// own condition, end to end). There a call costs at least its kernels' span, and heuristic-first costs at most its
// end-to-end time per call over 20 back-to-back calls (TimingStats::events_per_call_us, which includes whatever it
// spends outside its kernels). So a challenger whose kernel-time median is not below that cannot win; it is not timed
// unless within kFinalistReachSlack of it (that end-to-end time is one batch of 20 calls, as noisy as one). With no
// challenger left the stage does not run and heuristic-first is kept at margin 1, as when no candidate was near.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "problem/measurement.hpp"

namespace gemmtune {

inline constexpr double kFirstBatchMargin = 0.20;
inline constexpr double kFinalistReachSlack = 0.02;
// The first batch: the warm-up calls, and never fewer than this (a profile may ask for no warm-up).
inline constexpr int kMinFirstBatchCalls = 3;

inline constexpr const char* kPrunedFirstBatch = "pruned: first_batch";

// Why a candidate was not sampled to convergence; empty `stopped_by` when it is sampled.
struct PruneVerdict {
  std::string stopped_by;  // kPrunedFirstBatch, or "" (sample it)
  std::string reason;      // the numbers behind the verdict, for the record's message
  bool pruned() const { return !stopped_by.empty(); }
};

// first_batch: the statistics of the candidate's first batch; best_us: the fastest median sampled to convergence so
// far in this problem (<= 0: none yet, nothing is pruned).
PruneVerdict first_batch_verdict(const TimingStats& first_batch, double best_us, double margin = kFirstBatchMargin);

// The order to sample candidates in: by their fastest first-batch call, fastest first (ties in candidate order), so
// the bound is as low as it gets from the first converged candidate on. Candidates without a first batch (not
// verified, skipped: no samples) are left out.
std::vector<std::size_t> sampling_order(const std::vector<TimingStats>& first_batches);

// The second pass over one problem's candidates (tuner/sweep.cpp): those verified (status Ok) are sampled to
// convergence through `sample`, in sampling_order, except those first_batch_verdict prunes against the best median
// sampled so far; heuristic-first (problem/candidate_choice.hpp) never is. A pruned record takes its first batch's
// statistics, stopped_by and, as its message, the verdict's reason. Without pruning every verified candidate is
// sampled, in candidate order. An Error thrown by `sample` marks that record failed (status Error, its message).
struct SamplingCounts {
  int sampled = 0;
  int pruned = 0;
};
SamplingCounts sample_or_prune(std::vector<MeasurementRecord>& records, const std::vector<TimingStats>& first_batches,
                               bool prune, const std::function<TimingStats(const MeasurementRecord&)>& sample);

// Of `finalists` (heuristic-first first, as problem/candidate_choice.hpp's finalists() returns them), heuristic-first
// and the challengers that can still beat it as a program pays, by the reach rule above. A heuristic-first without an
// end-to-end time (0: not measured) keeps every challenger.
std::vector<const MeasurementRecord*> finalists_within_reach(const std::vector<const MeasurementRecord*>& finalists);

}  // namespace gemmtune
