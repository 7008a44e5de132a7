// The performance regression gate: compares two sweep results case by case (by record key) and, on by default, problem
// by problem, and decides what got slower. A comparison is slower beyond noise when ALL hold:
//   1. threshold: current median > baseline median × (1 + T/100), where T is the case's threshold:
//                 max(--threshold, the baseline's run-to-run spread of that case) (gate/baseline_runs.hpp);
//   2. noise:     current p10 > baseline p90, i.e. the two runs' p10–p90 ranges do not overlap: at least 90% of
//                 the current samples are slower than 90% of the baseline's;
//   3. clock:     the time in SM clock cycles (median × clock) also grew past the threshold.
// Improvements mirror 1 and 2. A case past the threshold whose ranges overlap is reported as "within noise" and does
// not fail. Per problem the same rule compares the fastest verified candidate of each run and the candidate the cache
// would choose in each run (problem/candidate_choice.hpp): what a program using the cache gets; such a comparison
// regresses when it is slower beyond noise.
// A case slower beyond noise regresses only when one run's luck cannot explain it, i.e. when one more holds:
//   4. it is what a program gets (its problem's fastest or chosen candidate in either run), or its family moved (a
//      majority of the same candidate's cases on the profile's shapes of that problem kind are slower than
//      --threshold: a code change moves them together), or it is slower than --lone-threshold.
// Between two single sweeps of one build, single cases moved by up to 9.7% (H200, ci) and 12.9% (H100, 4096³ tf32)
// outside both runs' p10–p90, up to 6 times their own p10–p90 width, while no problem's fastest candidate moved by
// more than 2.9% and no family by a majority: a case's own spread does not predict where its next run lands, so one
// case alone proves nothing below --lone-threshold. Such a case is reported as "isolated" and does not fail.
// docs/gate.md says why this rule.
#pragma once

#include <string>
#include <vector>

#include "gate/sweep_results.hpp"

namespace gemmtune {

struct GateOptions {
  double threshold_pct = 5.0;
  // How much slower a case must be to fail on its own evidence: neither picked nor moving with its family.
  double lone_threshold_pct = 25.0;
  int allow_missing = 0;    // cases that may go uncompared before the inputs count as not matching
  bool per_problem = true;  // also compare each problem's best and chosen candidate
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
  double threshold_pct = 0;   // what this case was held to: max(--threshold, the baseline's run-to-run spread)
  // Would have regressed at --threshold; within the slowdown the baseline's own runs showed: not a regression.
  bool within_run_to_run = false;
  // Set for the cases of compare_sweeps (rule 4), not by compare_case.
  bool picked = false;        // its problem's fastest or cache-chosen candidate in the baseline or the current run
  std::string family;         // case_family(): the cases a code change moves together
  int family_cases = 0;       // the family's compared cases, this one included
  int family_slower = 0;      // of them, those slower than --threshold
  // Slower beyond the threshold and the noise, but alone (rule 4 fails): one run's luck, not a regression.
  bool isolated = false;
};

// A case that could not be compared although it should have been; each counts against allow_missing.
struct MissingCase {
  std::string key;
  std::string why;
};

// A case the current run timed that the baseline has no timing for: a new candidate, a new problem, or one that
// failed in the baseline. Listed and counted, never failing: nothing was lost.
struct NewCase {
  std::string key;
  std::string why;
};

// One problem present, with verified timings, in both runs.
struct ProblemComparison {
  std::string problem_key;
  CaseComparison best;    // each run's fastest verified candidate (the two may differ)
  CaseComparison chosen;  // each run's candidate the cache would choose (candidate_choice.hpp)
  // Regressed when either comparison regressed; else improved when either improved; else unchanged.
  Verdict verdict() const;
};

enum class GateOutcome { Passed, Regressed, InputsDiffer };

struct GateResult {
  std::string device_key;
  SweepResults baseline_info, current_info;  // sources, profiles and versions; their cases are left empty
  GateOptions options;
  std::vector<ProblemComparison> problems;  // regressions (worst first), improvements, unchanged; empty when off
  std::vector<CaseComparison> cases;  // regressions (worst first), improvements (best first), unchanged (slowest first)
  std::vector<MissingCase> missing;
  std::vector<NewCase> new_cases;
  std::vector<std::string> new_problems;  // problems the current run timed that the baseline has no record of
  int not_in_profile = 0;  // baseline cases the current run's profile does not measure: not compared, not missing

  int count(Verdict v) const;          // cases
  int count_problems(Verdict v) const;
  int count_within_run_to_run() const;  // cases and problem comparisons the run-to-run spread kept from failing
  int count_isolated() const;           // cases slower beyond noise that moved alone
  // InputsDiffer (more missing cases than allowed) outranks Regressed: an incomplete comparison proves nothing.
  GateOutcome outcome() const;
  int exit_code() const;  // 0 passed, 1 regressed (a case or a problem), 2 inputs differ
};
const char* to_string(GateOutcome o);

// Decides one case that is ok in both runs, at max(threshold_pct, baseline.run_to_run_pct), by rules 1-3 alone.
CaseComparison compare_case(const CaseTiming& baseline, const CaseTiming& current, double threshold_pct);

// The cases a code change moves together: one own kernel variant, or cuBLASLt's algos with or without our epilogue
// kernel (cuBLASLt itself is pinned by the device key, and its algo per shape is the heuristic's), on every shape of
// one problem kind: "own/tf32_128x128x32_w64x64_s3 on fwd:nn:row:bias+gelu:tf32", "lt+epi on fwd:nn:row:relu:fp32".
std::string case_family(const CaseTiming& c);

// Throws InputError when the device keys differ: timings of different machines never compare.
// New cases: ok in the current run without an ok baseline record. Missing cases: a baseline ok case that is not ok in
// the current run; a baseline case the current run lacks, when both ran the same profile (a different profile, e.g.
// the CI profile against a default-profile baseline, measures a subset: its absent cases only count as
// not_in_profile).
GateResult compare_sweeps(const SweepResults& baseline, const SweepResults& current, const GateOptions& options);

// The rule in one line, for reports.
std::string gate_rule_text(const GateOptions& options);

}  // namespace gemmtune
