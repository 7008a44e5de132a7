// NoiseStoppingRule: when to stop sampling a candidate (after nvbench's stdrel criterion, on robust statistics).
//
// What the tuner compares is the median, so the rule bounds the median's own uncertainty, not the spread of single
// samples: small kernels jitter by a few percent call to call however long they are sampled, but their median
// settles. The median's relative standard error is estimated as 1.2533·σ/(√n·median), with σ taken robustly from
// the 10–90% range ((p90 − p10)/2.5631 for a normal sample) so one stray sample cannot stall or end the sampling.
// Stop when there are at least min_samples samples and min_time of kernel time and that error is at most
// max_noise_pct; or at the time cap, whatever the noise (the record keeps p10/p90, so a noisy result shows).
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
  double median_rel_error() const;
  bool capped() const { return total_us_ >= settings_.max_time_ms * 1e3; }

  TimingSettings settings_;
  std::vector<double> samples_;
  double total_us_ = 0;
};

}  // namespace gemmtune
