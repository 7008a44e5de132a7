// Sweep: for every planned problem, every candidate is verified against the fp64 reference, then timed; each
// problem's records are stored in the db in one transaction, which also updates the algo cache.
#pragma once

#include <string>
#include <vector>

#include "problem/measurement.hpp"
#include "profile/sweep_profile.hpp"
#include "tuner/plan.hpp"

namespace gemmtune {

struct SweepOptions {
  int device = 0;
  std::string db_path;          // empty: nothing is stored
  bool resume = false;          // skip problems this device key already has in the db
  bool force_events = false;    // time with CUDA events even where CUPTI works
  bool quiet = false;           // no progress lines on stderr
};

struct ProblemResult {
  GemmProblem problem;
  std::vector<MeasurementRecord> records;  // empty when resumed
  bool resumed = false;
};

struct SweepResult {
  RunInfo run;
  std::vector<ProblemResult> problems;
  int verify_failures = 0;
  int errors = 0;
  std::string timer_warning;  // set when CUPTI could not be used
};

SweepResult run_sweep(const SweepPlan& plan, const SweepProfile& profile, const SweepOptions& options);

}  // namespace gemmtune
