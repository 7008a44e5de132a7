// A noise-aware baseline: two or more `gemmtune sweep --json` runs of one build on one GPU, recorded back to back,
// combined into one document that is still a sweep JSON (schema gemmtune.sweep, version 1), so everything that reads
// a sweep reads it and `gemmtune gate --baseline` takes a plain sweep or a combined one alike.
//
// Per case that is ok in every run, the record is that of the run with the lower-middle median (its p10/p90, clock
// and the rest stay one real run's), plus
//   "run_to_run": {"runs": N, "medians_us": [one per run, in run order], "reference_run": 1-based,
//                  "spread_pct": 100·(max/min − 1), rounded up to 0.01}
// spread_pct is the largest slowdown between two of the recorded runs; the gate holds the case to
// max(--threshold, spread_pct), so a case whose own reruns moved by 8% is not failed for moving 6%.
// A case absent from a run, or with different statuses across runs, is dropped (a flaky case gates nothing) and
// listed. At the top level:
//   "baseline": {"schema": "gemmtune.baseline", "schema_version": 1,
//                "recorded": {device, driver, cublaslt_version, cuda_runtime, gemmtune_version, profile, ...notes},
//                "runs": [{source, run_id, started_at, finished_at}], "dropped": [{key, why}]}
// The sweep's per-problem summary ("problems") is not carried over: it was one run's; the caller recomputes it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gemmtune {

inline constexpr const char* kBaselineSchemaName = "gemmtune.baseline";
inline constexpr int kBaselineSchemaVersion = 1;

struct BaselineRun {
  nlohmann::json document;  // a `sweep --json` document
  std::string source;       // where it was read from, for errors and the provenance
};

struct CombinedBaseline {
  nlohmann::json document;
  int cases = 0;             // ok cases with a run-to-run spread
  int dropped = 0;           // cases left out: not in every run, or of different statuses
  double max_spread_pct = 0;
};

// Throws InputError (naming the source) unless there are at least two runs, each a valid sweep document that is not
// itself a combined baseline, all of one device key, profile and gemmtune version. notes (e.g. git_commit, build)
// go into baseline.recorded.
CombinedBaseline combine_baseline_runs(const std::vector<BaselineRun>& runs,
                                       const std::map<std::string, std::string>& notes);

}  // namespace gemmtune
