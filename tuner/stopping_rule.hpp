// NoiseStoppingRule: when to stop sampling a candidate (after nvbench's stdrel criterion, on robust statistics).
//
// Stop when enough samples and enough kernel time were collected and the relative spread (p90 − p10)/median is
// under the limit; or when the time cap is reached, whatever the noise (then the spread is reported as it is).
#pragma once

#include <string>
#include <vector>

#include "profile/sweep_profile.hpp"

namespace gemmtune {

class NoiseStoppingRule {
 public:
  explicit NoiseStoppingRule(const TimingSettings& settings) : settings_(settings) {}

  void add(const std::vector<double>& samples_us);
  bool done() const;
  // "converged" or "time cap": recorded so a noisy result can be told from a converged one.
  std::string reason() const;
  const std::vector<double>& samples() const { return samples_; }

 private:
  bool converged() const;
  bool capped() const { return total_us_ >= settings_.max_time_ms * 1e3; }

  TimingSettings settings_;
  std::vector<double> samples_;
  double total_us_ = 0;
};

}  // namespace gemmtune
