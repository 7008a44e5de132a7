// The first-use trial (RuntimeOptions::confirm_standins): before a challenger runs an untuned problem for good, time
// it against the default (cuBLASLt's heuristic-first) on that very problem and keep the faster. The challengers are
// a nearby tuned shape's choice (its evidence was measured at another shape) and, where the default is a fused
// cuBLASLt epilogue, the same heuristic's plain GEMM followed by our epilogue kernel (default_candidate.hpp).
//
// About a millisecond of GPU time, on scratch inputs of its own (rotating past 2× L2) and a stream of its own, with
// batches of back-to-back calls queued behind a blocking kernel and the two sides alternating, as the tuner's
// finalist stage does.
#pragma once

#include <cstddef>

#include "tuner/candidate_launcher.hpp"

namespace gemmtune::runtime {

struct TrialResult {
  double challenger_us = 0;  // median per-call time of the challenger
  double default_us = 0;     // of heuristic-first
  double challenger_slowest_us = 0;  // the challenger's slowest batch, per call
  double default_fastest_us = 0;     // heuristic-first's fastest batch, per call
  // The challenger is kept only where its slowest batch beats heuristic-first's fastest by the trial's noise floor
  // (1%): some heuristic-first kernels (clustered cuBLASLt algos) run at one of two speeds for tens of ms at a time,
  // and a millisecond of medians that caught the slow one kept a stand-in that ran 0.90-0.98x in the held-out
  // benchmark (270x14120x1064 bias+gelu tf32 on the H200).
  bool challenger_wins() const { return challenger_slowest_us * 1.01 < default_fastest_us; }
};

// Both launchers must be of one problem. Synchronizes its own stream; never touches the caller's.
TrialResult first_use_trial(const CandidateLauncher& challenger, const CandidateLauncher& fallback,
                            std::size_t l2_bytes);

}  // namespace gemmtune::runtime
