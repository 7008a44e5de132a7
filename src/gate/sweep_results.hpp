// SweepResults: what the gate needs of a `gemmtune sweep --json` document: the device key, the profile and, per
// record key, its status and timing quantiles. Read leniently about extra fields (the sweep may add some) and
// strictly about the ones the gate uses.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "problem/candidate.hpp"

namespace gemmtune {

inline constexpr const char* kSweepSchemaName = "gemmtune.sweep";
inline constexpr int kSweepSchemaVersion = 1;

struct CaseTiming {
  std::string key;     // "<problem key>/<candidate id>"
  std::string status;  // "ok", "verify_failed", ...: only ok cases have timings
  double median_us = 0, p10_us = 0, p90_us = 0;
  int samples = 0;
  double sm_clock_mhz = 0;  // measured right after sampling; 0 when the record has none
  std::string problem_key{};  // the key up to its first '/'; the candidate id follows it
  std::string problem_kind{};  // the problem key without its shape (GemmProblem::kind_key)
  Candidate candidate{};      // parsed from the key; heuristic_rank from the record's candidate object
  // A combined baseline's run-to-run spread of this case in percent (gate/baseline_runs.hpp); 0 for a plain sweep.
  double run_to_run_pct = 0;
  // A 3xtf32 candidate of an fp32 problem admitted by the fp32-equivalent policy. If the current run refuses what the
  // baseline admitted, the case is not ok there and counts as missing: an accuracy change cannot pass unseen.
  bool fp32_equivalent = false;
  bool ok() const { return status == "ok"; }
};

struct SweepResults {
  std::string source;  // the file it was read from
  std::string device_key;
  std::string profile;
  std::string gemmtune_version;
  std::vector<CaseTiming> cases;
};

// Throws InputError naming source and the first bad field: another schema or version, a missing or malformed device
// key (problem/device_key.hpp), a duplicate key, or an ok record without 0 < p10 <= median <= p90.
SweepResults sweep_results_from_json(const nlohmann::json& doc, const std::string& source);
SweepResults read_sweep_results(const std::string& path);

}  // namespace gemmtune
