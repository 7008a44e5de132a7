// The first-use trial (RuntimeOptions::confirm_standins): before a challenger runs an untuned problem for good, time
// it against the default (cuBLASLt's heuristic-first) on that very problem and keep the faster. The challengers are
// a nearby tuned shape's choice (its evidence was measured at another shape) and, where the default is a fused
// cuBLASLt epilogue, the same heuristic's plain GEMM followed by our epilogue kernel (default_candidate.hpp).
//
// About 1.5 ms of GPU time, on scratch inputs and a stream of its own, with batches of back-to-back calls queued
// behind a blocking kernel and the two sides alternating, as the tuner's finalist stage does, in three conditions,
// and the challenger must win each:
//   stream warm (the same inputs every call) and stream cold (inputs rotating past 2× L2): a cold-only trial kept an
//     fp32 split-k variant at 92×3072×359 bias+gelu that was 1.05-1.10× cold and 0.85-0.91× warm, where
//     heuristic-first gains more from resident inputs (H200);
//   graph warm (the warm batch captured as one CUDA graph and replayed): a graph closes the gaps between a cuBLASLt
//     call's kernels, so a multi-kernel heuristic-first gains more there than one kernel does; a stream-only trial
//     kept own/fp32_64x64x16_w32x32_t8x4_s2_split4 at 79×2048×520 bias+gelu fp32, 1.06× in a stream and 0.96×
//     from a graph (H200). Graph cold is left out: the gaps are the same microseconds, a smaller part of a cold call.
#pragma once

#include <cstddef>
#include <vector>

#include "launch/candidate_launcher.hpp"

namespace gemmtune::runtime {

struct TrialResult {
  double challenger_us = 0;  // median per-call time of the challenger
  double default_us = 0;     // of heuristic-first
  double challenger_slowest_us = 0;  // the challenger's slowest batch, per call
  double default_fastest_us = 0;     // heuristic-first's fastest batch, per call
  double noise_floor = 1.01;         // trial_noise_floor(heuristic-first)
  // The challenger is kept only where its slowest batch beats heuristic-first's fastest by the noise floor: a
  // millisecond of medians that caught a two-speed default at its slow speed kept a stand-in that ran 0.90-0.98x in
  // the held-out benchmark (270x14120x1064 bias+gelu tf32 on the H200).
  bool beats(double default_fastest) const { return challenger_slowest_us * noise_floor < default_fastest; }
};

// How much faster than heuristic-first's fastest batch a challenger's slowest must be. 1% in general. 12% where
// heuristic-first is a clustered cuBLASLt algo (cluster shape above 1x1x1): those run at one of two speeds, about 20%
// apart, for tens of ms at a time (144x3072x13824 tf32: 94.8 and 112.9 us; 149x13824x2048 tf32: 69 and 84-89 us on
// the H200), so one trial's millisecond may see only the slow one, and a problem's trials are judged against the
// default's fastest batch over all of them (fastest_default). Over the 46 problems with a clustered default in the
// held-out benchmark of seeds 1, 2 and 5-8 (H200, 77b59cf), the benchmark then timed the default at most 10.8% faster
// than that (672x2048x1952 tf32 from a graph: 31.2 us against 35.0), and up to 21% faster than one trial's fastest
// batch; 1.12 x 0.892 keeps a winner at 0.999x or better there. The 20% that one trial alone needed left the default
// running at 6 of those problems where one of our kernels was 12-34% faster than the benchmark's default time.
double trial_noise_floor(const Candidate& heuristic_first);

// Heuristic-first's fastest batch per call in each condition over some trials of one problem.
struct DefaultFastest {
  double warm_us = 0, cold_us = 0, graph_us = 0;
};

// The trial in its three conditions.
struct ProgramTrial {
  TrialResult warm, cold, graph;  // stream warm, stream cold, graph warm
  // Against heuristic-first's fastest batches over every trial of the problem (fastest_default).
  bool challenger_wins(const DefaultFastest& d) const {
    return warm.beats(d.warm_us) && cold.beats(d.cold_us) && graph.beats(d.graph_us);
  }
  // What ranks winners against each other: the challenger's per-call time over the three.
  double challenger_us() const { return warm.challenger_us + cold.challenger_us + graph.challenger_us; }
};

// The default's fastest batch in each condition over `trials` (every trial of one problem); zeros for none.
DefaultFastest fastest_default(const std::vector<ProgramTrial>& trials);

// Both launchers must be of one problem. Synchronizes its own stream; never touches the caller's.
ProgramTrial first_use_trial(const CandidateLauncher& challenger, const CandidateLauncher& fallback,
                              std::size_t l2_bytes);

}  // namespace gemmtune::runtime
