// Robust summaries of per-call kernel times: medians and percentiles, because GPU timings have long upper tails.
#pragma once

#include <vector>

#include "problem/measurement.hpp"

namespace gemmtune {

// The q-quantile (0..1) of `sorted` by linear interpolation between closest ranks. `sorted` must be non-empty.
double quantile(const std::vector<double>& sorted, double q);

// median, p10, p90, mean, stddev, min, max and the sample count of `samples_us` (any order, non-empty).
TimingStats summarize(std::vector<double> samples_us);

}  // namespace gemmtune
