// What a sweep prints and writes: the per-problem summary table, the --json document the gate reads, --csv.
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "tuner/sweep.hpp"

namespace gemmtune {

// Per problem: the heuristic's first choice, the best of each backend, the winner and its speedup over the
// heuristic's first choice (what tuning bought).
struct ProblemSummary {
  std::string problem_key;
  double heuristic_first_us = 0;  // cuBLASLt rank 0; 0 when it has none
  double best_lt_us = 0, best_own_us = 0, best_us = 0;
  std::string best_candidate;
  double best_tflops = 0;
  int candidates = 0, verify_failed = 0;
};

ProblemSummary summarize_problem(const ProblemResult& pr);
// One entry of the --json document's "problems": the summary above (without the optional metrics).
nlohmann::json problem_summary_json(const ProblemResult& pr);

// A problem's cost in the --json document ("cost" of each entry of "problems"), and back (for --devices, which
// combines its workers' documents); a document without it gives an empty cost.
nlohmann::json cost_json(const ProblemCost& c);
ProblemCost cost_from_json(const nlohmann::json& problem_entry);
// The finalist stage in the --json document ("finalist_stage" of an entry of "problems"; absent where no stage ran):
// {"kept": candidate id, "evidence": MarginEvidence::encode(), "finalists": [{"candidate", "role", "noise_bound",
// "conditions": [{"condition", "median_us", "rel_spread"}]}]}; and back into pr (kept_record, evidence, finalists),
// for --devices. A document without it leaves pr as it was; a malformed one throws InputError.
nlohmann::json finalist_stage_json(const ProblemResult& pr);
void finalist_stage_from_json(const nlohmann::json& problem_entry, ProblemResult& pr);
// The sweep's cost over its measured problems: "N problems in 1m05s (...): where the time went; candidates sampled
// and pruned; the finalist stage". One line; empty when no problem was measured.
std::string cost_summary(const SweepResult& result);

void print_sweep_table(const SweepResult& result, std::ostream& out);
// {"schema": "gemmtune.sweep", "schema_version": 1, "device": ..., "results": [every record], "problems": [...],
//  "cost": {the sweep's setup and wall seconds, and its problems' costs summed}}
nlohmann::json sweep_json(const SweepResult& result);
void write_sweep_json(const SweepResult& result, const std::string& path);
void write_sweep_csv(const SweepResult& result, const std::string& path);

}  // namespace gemmtune
