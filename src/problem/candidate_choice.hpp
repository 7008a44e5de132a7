// Which of one problem's measured candidates the cache keeps (and the sweep's table calls "best").
//
// The fastest verified candidate, unless cuBLASLt's own first choice is within kChoiceTieBand of it. Medians that
// close are the same speed as far as a sweep can tell: its stopping rule bounds each median's standard error near 1%,
// and two runs of the same algo differ by more than that. The heuristic's answer is then the safer pick: the runtime
// runs exactly what cuBLASLt would have, instead of a candidate that won by noise (measured on the H100: a 0.5% win
// in the sweep for cuBLASLt + our epilogue kernel at 4096³ was a 2% loss in the runtime benchmark).
#pragma once

#include <vector>

#include "problem/measurement.hpp"

namespace gemmtune {

inline constexpr double kChoiceTieBand = 0.01;

// cuBLASLt's first choice among the records: the first verified rank-0 cuBLASLt record. The sweep enumerates the
// fused heuristic's answers before the unfused baseline's, so that is its fused algo where it has one. Null if none.
const MeasurementRecord* heuristic_first(const std::vector<MeasurementRecord>& records);

// The record the cache keeps, by the rule above; null when no record was verified and timed.
const MeasurementRecord* chosen_candidate(const std::vector<MeasurementRecord>& records);

}  // namespace gemmtune
