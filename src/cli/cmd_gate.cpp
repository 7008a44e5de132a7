// gemmtune gate: compare a sweep against a baseline sweep and fail (exit 1) when a problem or a case got slower beyond
// both the threshold and the runs' own noise; exit 2 when the two runs cannot be compared. The rule lives in
// gate/gate.hpp. Two more jobs keep baselines current: --combine-baseline makes a noise-aware baseline of several
// sweeps (gate/baseline_runs.hpp), --check-baseline says, without a GPU, whether a baseline still matches this build's
// plan (gate/baseline_check.hpp).
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "common/json_fields.hpp"
#include "gate/baseline_check.hpp"
#include "gate/baseline_runs.hpp"
#include "gate/gate.hpp"
#include "gate/report.hpp"
#include "profile/sweep_profile.hpp"
#include "tuner/plan.hpp"
#include "tuner/plan_keys.hpp"
#include "tuner/sweep_report.hpp"

namespace gemmtune::cli {
namespace {

struct GateArgs {
  std::string baseline, current;
  GateOptions options;
  bool no_per_problem = false;
  std::string junit, markdown, json;
  std::string combine_out;
  std::vector<std::string> runs;
  std::vector<std::string> notes;
  std::string check, profile;
};

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw InputError("cannot write " + path);
}

void compare(const GateArgs& a) {
  GateOptions options = a.options;
  options.per_problem = !a.no_per_problem;
  const GateResult result = compare_sweeps(read_sweep_results(a.baseline), read_sweep_results(a.current), options);
  write_gate_table(std::cout, result);
  std::cout.flush();
  // The reports are written whatever the outcome: a failing CI job is exactly when they are read.
  if (!a.junit.empty()) write_text_file(a.junit, gate_junit(result));
  if (!a.markdown.empty()) write_text_file(a.markdown, gate_markdown(result));
  if (!a.json.empty()) write_json_file(a.json, gate_json(result));
  switch (result.outcome()) {
    case GateOutcome::Passed: return;
    case GateOutcome::Regressed: throw CheckError(gate_headline(result));
    case GateOutcome::InputsDiffer: throw InputError(gate_headline(result));
  }
}

// The sweep's per-problem summary over the combined records, so the baseline reads like any sweep document.
nlohmann::json problem_summaries(const nlohmann::json& results) {
  std::vector<ProblemResult> problems;
  std::map<std::string, std::size_t> index;
  for (const nlohmann::json& r : results) {
    const MeasurementRecord record = r.get<MeasurementRecord>();
    const auto [it, added] = index.emplace(record.problem.key(), problems.size());
    if (added) {
      ProblemResult pr;
      pr.problem = record.problem;
      problems.push_back(std::move(pr));
    }
    problems[it->second].records.push_back(record);
  }
  nlohmann::json out = nlohmann::json::array();
  for (const ProblemResult& pr : problems) out.push_back(problem_summary_json(pr));
  return out;
}

void combine(const GateArgs& a) {
  std::map<std::string, std::string> notes;
  for (const std::string& note : a.notes) {
    const std::size_t eq = note.find('=');
    if (eq == 0 || eq == std::string::npos) throw InputError("--note '" + note + "': expected NAME=VALUE");
    notes[note.substr(0, eq)] = note.substr(eq + 1);
  }
  std::vector<BaselineRun> runs;
  for (const std::string& path : a.runs) runs.push_back({read_json_file(path), path});
  CombinedBaseline combined = combine_baseline_runs(runs, notes);
  combined.document["problems"] = problem_summaries(combined.document.at("results"));
  write_json_file(a.combine_out, combined.document);
  std::cout << "baseline: " << a.combine_out << " from " << runs.size() << " runs: " << combined.cases
            << " timed cases, largest run-to-run spread " << format_change(1 + combined.max_spread_pct / 100)
            << ", " << combined.dropped << " case(s) dropped (not in every run or of different statuses)\n";
  for (const nlohmann::json& d : combined.document["baseline"]["dropped"])
    std::cout << "  dropped: " << d["key"].get<std::string>() << ": " << d["why"].get<std::string>() << "\n";
}

void check(const GateArgs& a) {
  if (a.profile.empty()) throw InputError("--check-baseline needs --profile (the profile the CI job sweeps, e.g. ci)");
  const SweepProfile profile = load_sweep_profile(a.profile, default_profiles_dir());
  const BaselineCheck result = check_baseline(read_sweep_results(a.check),
                                              planned_keys(make_sweep_plan(profile, {}, {}), profile.lt.workspace_bytes));
  write_baseline_check(std::cout, result);
  std::cout.flush();
  if (!result.ok())
    throw CheckError("baseline " + a.check + " does not match this build's '" + result.plan_profile + "' plan");
}

void run(const GateArgs& a) {
  const bool comparing = !a.baseline.empty() || !a.current.empty();
  const int modes = int{comparing} + int{!a.combine_out.empty()} + int{!a.check.empty()};
  if (modes != 1)
    throw InputError("give one of: --baseline FILE --current FILE; --combine-baseline OUT RUN...; "
                     "--check-baseline FILE --profile NAME");
  if (!a.runs.empty() && a.combine_out.empty())
    throw InputError("sweep files as arguments only go with --combine-baseline");
  if (!a.profile.empty() && a.check.empty()) throw InputError("--profile only goes with --check-baseline");
  if (!a.notes.empty() && a.combine_out.empty()) throw InputError("--note only goes with --combine-baseline");
  if (!a.combine_out.empty()) return combine(a);
  if (!a.check.empty()) return check(a);
  if (a.baseline.empty() || a.current.empty()) throw InputError("--baseline and --current go together");
  compare(a);
}

}  // namespace

void register_gate(CLI::App& app) {
  auto a = std::make_shared<GateArgs>();
  auto* cmd = app.add_subcommand(
      "gate", "Compare two `sweep --json` results problem by problem and case by case: exit 1 if one regressed, 2 if "
              "they do not match; or combine sweeps into a baseline, or check a baseline against this build");
  cmd->add_option("--baseline", a->baseline,
                  "The reference: a sweep JSON or a combined baseline (e.g. results/<gpu>/baseline.json)");
  cmd->add_option("--current", a->current, "The sweep JSON to check");
  cmd->add_option("--threshold", a->options.threshold_pct,
                  "Percent slower a median must be before it can regress (it must also be outside the noise); a "
                  "combined baseline raises it per case to that case's run-to-run spread")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--lone-threshold", a->options.lone_threshold_pct,
                  "Percent slower a case must be to fail alone: when it is no problem's fastest or chosen candidate "
                  "and most of its family (the same candidate on the profile's other shapes) is not slower too")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--allow-missing", a->options.allow_missing,
                  "Baseline cases that may go uncompared (failed or absent now) before the inputs count as not "
                  "matching; new cases never count")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--no-per-problem", a->no_per_problem,
                "Compare cases only, not each problem's fastest and cache-chosen candidate");
  cmd->add_option("--junit", a->junit, "Write JUnit XML: a test case per problem and per key, a failure per regression");
  cmd->add_option("--markdown", a->markdown, "Write a Markdown summary (for a CI job summary)");
  cmd->add_option("--json", a->json, "Write the comparison as JSON");
  cmd->add_option("--combine-baseline", a->combine_out,
                  "Write a noise-aware baseline to this file from the sweep JSONs given as arguments (two or more, "
                  "recorded back to back)");
  cmd->add_option("runs", a->runs, "With --combine-baseline: the sweep JSONs to combine");
  // One value per --note, so the sweep files may follow it.
  cmd->add_option("--note", a->notes, "With --combine-baseline: NAME=VALUE recorded in the baseline (git_commit=...)")
      ->allow_extra_args(false);
  cmd->add_option("--check-baseline", a->check,
                  "Check, without a GPU, that this baseline's problems and own-kernel candidates are what this build "
                  "plans for --profile: exit 1 listing stale and missing entries");
  cmd->add_option("--profile", a->profile, "With --check-baseline: the profile the CI job sweeps (e.g. ci)");
  cmd->callback([a] { run(*a); });
}

}  // namespace gemmtune::cli
