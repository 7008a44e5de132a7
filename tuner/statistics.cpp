#include "tuner/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.hpp"

namespace gemmtune {

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) throw CheckError("quantile of no samples");
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

TimingStats summarize(std::vector<double> samples_us) {
  if (samples_us.empty()) throw CheckError("no timing samples to summarize");
  std::sort(samples_us.begin(), samples_us.end());
  TimingStats s;
  s.samples = static_cast<int>(samples_us.size());
  s.median_us = quantile(samples_us, 0.5);
  s.p10_us = quantile(samples_us, 0.1);
  s.p90_us = quantile(samples_us, 0.9);
  s.min_us = samples_us.front();
  s.max_us = samples_us.back();
  const double n = static_cast<double>(samples_us.size());
  s.mean_us = std::accumulate(samples_us.begin(), samples_us.end(), 0.0) / n;
  double var = 0;
  for (double x : samples_us) var += (x - s.mean_us) * (x - s.mean_us);
  s.stddev_us = samples_us.size() > 1 ? std::sqrt(var / (n - 1)) : 0.0;
  return s;
}

}  // namespace gemmtune
