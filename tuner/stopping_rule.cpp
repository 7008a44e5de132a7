#include "tuner/stopping_rule.hpp"

#include "tuner/statistics.hpp"

namespace gemmtune {

void NoiseStoppingRule::add(const std::vector<double>& samples_us) {
  for (double s : samples_us) {
    samples_.push_back(s);
    total_us_ += s;
  }
}

bool NoiseStoppingRule::converged() const {
  if (static_cast<int>(samples_.size()) < settings_.min_samples) return false;
  if (total_us_ < settings_.min_time_ms * 1e3) return false;
  return summarize(samples_).rel_spread() * 100.0 <= settings_.max_noise_pct;
}

bool NoiseStoppingRule::done() const { return converged() || capped(); }

std::string NoiseStoppingRule::reason() const {
  if (converged()) return "converged";
  return capped() ? "time cap" : "sampling";
}

}  // namespace gemmtune
