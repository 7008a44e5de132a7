// gemmtune report: the db's results as DIR/report.json, drawn by scripts/report.py into DIR/index.html (a
// self-contained page, plots inline) plus each plot as PNG and SVG beside it.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "db/tuning_db.hpp"
#include "profiler/process.hpp"
#include "profiler/report_data.hpp"

namespace gemmtune::cli {
namespace {

struct ReportArgs {
  std::string db;
  std::string out;
  std::string script;
  std::string python = "python3";
  bool json_only = false;
  std::vector<std::string> accuracy;
};

// `gemmtune accuracy` writes results/<gpu>/accuracy.json beside results/gemmtune.db, where scripts/run.sh sweeps: the
// files that sit beside the db for its GPUs are drawn unless --accuracy names others.
std::vector<std::string> accuracy_files(const ReportArgs& a, const TuningDb& db) {
  if (!a.accuracy.empty()) {
    for (const std::string& f : a.accuracy)
      if (!std::filesystem::is_regular_file(f)) throw InputError("accuracy file '" + f + "' not found");
    return a.accuracy;
  }
  std::vector<std::string> found;
  const std::filesystem::path dir = std::filesystem::path(a.db).parent_path();
  for (const RunInfo& run : db.runs()) {
    const std::string f = (dir / run.device.slug() / "accuracy.json").string();
    if (std::filesystem::is_regular_file(f) && std::find(found.begin(), found.end(), f) == found.end())
      found.push_back(f);
  }
  return found;
}

// The drawing needs Python 3 with matplotlib; say so (and how to get them) before writing half a report.
void require_matplotlib(const std::string& python) {
  const std::string how = " (Debian/Ubuntu: apt install python3 python3-matplotlib; or pass --python, or --json-only)";
  ProcessOutput probe;
  try {
    probe = capture_process({python, "-c", "import sys, matplotlib; sys.exit(sys.version_info[0] != 3)"});
  } catch (const InputError&) {
    throw InputError("report draws its plots with Python 3 and matplotlib: '" + python + "' was not found" + how);
  }
  if (probe.status != 0)
    throw InputError("report draws its plots with Python 3 and matplotlib: '" + python +
                     "' is not Python 3 or cannot import matplotlib" + how);
}

void report(const ReportArgs& a) {
  const TuningDb db(a.db, TuningDb::Access::ReadOnly);
  const nlohmann::json data = build_report_json(db);
  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  if (ec) throw InputError("cannot create directory '" + a.out + "': " + ec.message());
  const std::string json_path = a.out + "/report.json";
  {
    std::ofstream out(json_path);
    out << data.dump(2) << "\n";
    if (!out) throw InputError("cannot write '" + json_path + "'");
  }
  std::cout << "wrote " << json_path << "\n";
  if (a.json_only) return;

  const std::string script = a.script.empty() ? default_report_script() : a.script;
  if (!std::filesystem::is_regular_file(script))
    throw InputError("report script '" + script + "' not found (set --script, GEMMTUNE_REPORT_SCRIPT or GEMMTUNE_DATA_DIR)");
  require_matplotlib(a.python);
  std::vector<std::string> command = {a.python, script, json_path, a.out};
  for (const std::string& f : accuracy_files(a, db)) command.push_back(f);
  const int status = run_process(command);
  if (status != 0) throw Error(static_cast<ExitCode>(status), "report script exited with status " + std::to_string(status));
}

}  // namespace

void register_report(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand("report", "Write an HTML report (plots, roofline, ncu metrics) of a tuning db");
  cmd->add_option("--db", a->db, "Tuning db to report on")->required();
  cmd->add_option("--out", a->out, "Directory for report.json, index.html and the plots")->required();
  cmd->add_option("--script", a->script,
                  "The drawing script (default: $GEMMTUNE_REPORT_SCRIPT, else share/gemmtune/scripts/report.py of the install)");
  cmd->add_option("--python", a->python, "The Python that runs it; it needs matplotlib")->capture_default_str();
  cmd->add_option("--accuracy", a->accuracy,
                  "accuracy.json files of `gemmtune accuracy` to draw (default: <db dir>/<gpu>/accuracy.json if present)");
  cmd->add_flag("--json-only", a->json_only, "Write report.json and stop (no Python needed)");
  cmd->callback([a] { report(*a); });
}

}  // namespace gemmtune::cli
