// gemmtune apply: runs an unmodified program with its fp32/tf32 cuBLAS and cuBLASLt GEMMs taken over by gemmtune's
// runtime wherever the db holds an exact entry for the problem, and every other call left to the library
// (docs/apply.md). The GEMM shim of `trace --gemms` is preloaded and told to route through environment variables
// (apply/apply_settings.hpp); the command's exit status is gemmtune's.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apply/apply_report.hpp"
#include "apply/apply_settings.hpp"
#include "cli/commands.hpp"
#include "cli/db_option.hpp"
#include "cli/trace_libraries.hpp"
#include "common/error.hpp"
#include "common/scratch_dir.hpp"
#include "profiler/process.hpp"

namespace gemmtune::cli {
namespace {

namespace fs = std::filesystem;

struct ApplyArgs {
  std::vector<std::string> command;
  std::string db;
  bool fp32_equivalent = false;
  bool no_host_yield = false;
  bool record = false;
  std::string report;
  std::string memory_budget;  // MiB, as given
};

// Every check that needs no program run comes first, so a typo costs no run.
void check_args(const ApplyArgs& a, const std::string& db) {
  if (a.command.empty()) throw InputError("apply needs a command: gemmtune apply [options] -- CMD ARGS...");
  if (!a.memory_budget.empty() && !apply::parse_memory_mib(a.memory_budget))
    throw InputError("--memory-budget: '" + a.memory_budget + "' is not a whole number of MiB");
  std::error_code ec;
  if (!fs::is_regular_file(db, ec))
    throw InputError("no tuning db at '" + db + "': tune the program's GEMMs first (gemmtune trace --gemms --db " +
                     db + " -- CMD; gemmtune sweep --from-misses --db " + db + ")");
  if (!a.report.empty()) {
    const fs::path parent = fs::path(a.report).parent_path();
    if (!parent.empty() && !fs::is_directory(parent, ec))
      throw InputError("--report: no directory '" + parent.string() + "'");
  }
}

// A part that cannot be read (a process of the command that wrote a damaged one) costs its rows and one warning, not
// the report of the other processes nor the command's exit status.
void write_report(const std::string& parts_dir, const std::string& path) {
  std::vector<std::string> skipped;
  const nlohmann::json report = report_json(apply::read_report_parts(parts_dir, &skipped));
  for (const std::string& why : skipped) std::cerr << "gemmtune apply: warning: report part left out: " << why << "\n";
  std::ofstream out(path);
  out << report.dump(2) << "\n";
  if (!out) throw InputError("cannot write the report " + path);
  std::cerr << "gemmtune apply: " << report.at("routed_calls") << " of " << report.at("calls")
            << " GEMM calls ran through gemmtune; report in " << path << "\n";
}

void run_apply(const ApplyArgs& a) {
  const std::string db = fs::absolute(db_or_default(a.db)).string();
  check_args(a, db);
  const std::string shim = find_trace_library(kGemmShimLibrary);
  const ScratchDir parts("gemmtune-apply");  // each process's report part
  apply::ApplySettings settings;
  settings.on = true;
  settings.db = db;
  settings.options.fp32_equivalent = a.fp32_equivalent;
  settings.options.host_yield = !a.no_host_yield;
  settings.record = a.record;
  settings.report_dir = a.report.empty() ? "" : parts.path();
  if (!a.memory_budget.empty()) settings.memory_mib = *apply::parse_memory_mib(a.memory_budget);
  std::vector<std::string> env = apply::apply_environment(settings);
  const char* preload = std::getenv("LD_PRELOAD");
  env.push_back("LD_PRELOAD=" + shim + (preload && *preload ? std::string(":") + preload : ""));
  int status = 0;
  {
    const IgnoreInterrupts keep_running;
    status = run_process(a.command, env);
  }
  if (!a.report.empty()) write_report(parts.path(), a.report);
  if (status != 0)
    throw Error(static_cast<ExitCode>(status), "the command exited with status " + std::to_string(status));
}

}  // namespace

void register_apply(CLI::App& app) {
  auto a = std::make_shared<ApplyArgs>();
  auto* cmd = app.add_subcommand("apply", "Run a command with its fp32/tf32 cuBLAS and cuBLASLt GEMMs run by "
                                          "gemmtune's runtime where the db has an exact entry; the rest by cuBLAS");
  cmd->footer("Usage: gemmtune apply [OPTIONS] -- CMD ARGS...   (docs/apply.md)");
  cmd->add_option("--db", a->db, std::string("The tuning db") + kDefaultDbHelp);
  cmd->add_flag("--fp32-equivalent", a->fp32_equivalent,
                "Let fp32 calls run the 3xtf32 entries `sweep --fp32-equivalent` admitted");
  cmd->add_flag("--no-host-yield", a->no_host_yield,
                "Route every call of a padded (+pad) entry, also where the GPU has caught up with the program (by "
                "default such a call then goes to the library where the entry saved less GPU time in its sweep than "
                "its extra launches cost the host)");
  cmd->add_flag("--record", a->record, "Record the problems without an exact entry as misses in the db "
                                       "(for `gemmtune sweep --from-misses`)");
  cmd->add_option("--report", a->report, "Write per call: how often, whether gemmtune ran it (and with what) or why "
                                         "not (JSON)");
  cmd->add_option("--memory-budget", a->memory_budget,
                  "Device memory (MiB) gemmtune's runtime may hold per GPU; a call that needs more stays with cuBLAS "
                  "(default: no cap)");
  cmd->add_option("command", a->command, "The command to run and its arguments, after --");
  cmd->callback([a] { run_apply(*a); });
}

}  // namespace gemmtune::cli
