#include "tuner/stopping_rule.hpp"

#include <cmath>

#include "tuner/statistics.hpp"

namespace gemmtune {

void NoiseStoppingRule::add(const std::vector<double>& samples_us) {
  for (double s : samples_us) {
    samples_.push_back(s);
    total_us_ += s;
  }
}

double NoiseStoppingRule::median_rel_error() const {
  const TimingStats s = summarize(samples_);
  const double sigma = (s.p90_us - s.p10_us) / 2.5631;  // p90 − p10 = 2·1.2816σ for a normal sample
  return 1.2533 * sigma / (std::sqrt(static_cast<double>(s.samples)) * s.median_us);
}

bool NoiseStoppingRule::converged() const {
  if (static_cast<int>(samples_.size()) < settings_.min_samples) return false;
  if (total_us_ < settings_.min_time_ms * 1e3) return false;
  return median_rel_error() * 100.0 <= settings_.max_noise_pct;
}

bool NoiseStoppingRule::done() const { return converged() || capped(); }

std::string NoiseStoppingRule::reason() const {
  if (converged()) return "converged";
  return capped() ? "time cap" : "sampling";
}

}  // namespace gemmtune
