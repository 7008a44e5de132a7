// gemmtune gate: compare a sweep against a baseline sweep and fail (exit 1) when a case got slower beyond both the
// threshold and the runs' own noise; exit 2 when the two runs cannot be compared. The rule lives in gate/gate.hpp.
#include <fstream>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "common/json_fields.hpp"
#include "gate/gate.hpp"
#include "gate/report.hpp"

namespace gemmtune::cli {
namespace {

struct GateArgs {
  std::string baseline, current;
  GateOptions options;
  std::string junit, markdown, json;
};

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw InputError("cannot write " + path);
}

void run(const GateArgs& a) {
  const GateResult result =
      compare_sweeps(read_sweep_results(a.baseline), read_sweep_results(a.current), a.options);
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

}  // namespace

void register_gate(CLI::App& app) {
  auto a = std::make_shared<GateArgs>();
  auto* cmd = app.add_subcommand(
      "gate", "Compare two `sweep --json` results case by case: exit 1 if a case regressed, 2 if they do not match");
  cmd->add_option("--baseline", a->baseline, "The reference sweep JSON (e.g. results/<gpu>/baseline.json)")
      ->required();
  cmd->add_option("--current", a->current, "The sweep JSON to check")->required();
  cmd->add_option("--threshold", a->options.threshold_pct,
                  "Percent slower a case's median must be before it can regress (it must also be outside the noise)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--allow-missing", a->options.allow_missing,
                  "Cases that may go uncompared (new, failed or absent) before the inputs count as not matching")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--junit", a->junit, "Write JUnit XML: one test case per key, a failure per regression");
  cmd->add_option("--markdown", a->markdown, "Write a Markdown summary (for a CI job summary)");
  cmd->add_option("--json", a->json, "Write the comparison as JSON");
  cmd->callback([a] { run(*a); });
}

}  // namespace gemmtune::cli
