// The performance regression gate: compares two sweep results case by case (by record key) and decides which
// cases got slower. A case regresses only when BOTH hold:
//   1. threshold: current median > baseline median × (1 + threshold/100), and
//   2. noise:     current p10 > baseline p90, i.e. the two runs' p10–p90 ranges do not overlap: at least 90% of
//                 the current samples are slower than 90% of the baseline's.
// Improvements mirror it (current median < baseline median / (1 + threshold/100) and current p90 < baseline
// p10). A case past the threshold whose ranges overlap is reported as "within noise" and does not fail.
// README.md, "The regression gate", says why this rule.
#pragma once

#include <string>
#include <vector>

#include "gate/sweep_results.hpp"

namespace gemmtune {

struct GateOptions {
  double threshold_pct = 5.0;
  int allow_missing = 0;  // cases that may go uncompared before the inputs count as not matching
};

enum class Verdict { Regressed, Improved, Unchanged };
const char* to_string(Verdict v);

struct CaseComparison {
  std::string key;
  CaseTiming baseline, current;
  double ratio = 1;           // current median / baseline median: above 1 is slower
  Verdict verdict = Verdict::Unchanged;
  bool within_noise = false;  // past the threshold, but the p10–p90 ranges overlap
  bool throttled = false;     // slower outside the noise, but by no more than its SM clock fell: not a regression
};

// A case that could not be compared; each counts against allow_missing.
struct MissingCase {
  std::string key;
  std::string why;
};

enum class GateOutcome { Passed, Regressed, InputsDiffer };

struct GateResult {
  std::string device_key;
  SweepResults baseline_info, current_info;  // sources, profiles and versions; their cases are left empty
  GateOptions options;
  std::vector<CaseComparison> cases;  // regressions (worst first), improvements (best first), unchanged (slowest first)
  std::vector<MissingCase> missing;
  int not_in_profile = 0;  // baseline cases the current run's profile does not measure: not compared, not missing

  int count(Verdict v) const;
  // InputsDiffer (more missing cases than allowed) outranks Regressed: an incomplete comparison proves nothing.
  GateOutcome outcome() const;
  int exit_code() const;  // 0 passed, 1 regressed, 2 inputs differ
};
const char* to_string(GateOutcome o);

// Decides one case that is ok in both runs.
CaseComparison compare_case(const CaseTiming& baseline, const CaseTiming& current, double threshold_pct);

// Throws InputError when the device keys differ: timings of different machines never compare.
// Missing cases: an ok current case without an ok baseline; a baseline ok case that is not ok in the current run;
// a baseline case the current run lacks, when both ran the same profile (a different profile, e.g. the CI profile
// against a default-profile baseline, measures a subset: its absent cases only count as not_in_profile).
GateResult compare_sweeps(const SweepResults& baseline, const SweepResults& current, const GateOptions& options);

// The rule in one line, for reports.
std::string gate_rule_text(const GateOptions& options);

}  // namespace gemmtune
