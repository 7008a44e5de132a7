// gemmtune nsys: the Nsight Systems command that records a timeline of one case's timed calls, and the
// `nsys stats` line that turns it into a kernel table.
#include <filesystem>
#include <iostream>

#include "cli/case_options.hpp"
#include "cli/commands.hpp"
#include "cli/device_key_option.hpp"
#include "cli/profiled_run.hpp"
#include "common/error.hpp"
#include "profiler/file_name.hpp"
#include "profiler/nsys_command.hpp"
#include "profiler/process.hpp"
#include "profiler/shell_quote.hpp"

namespace gemmtune::cli {
namespace {

struct NsysArgs {
  CaseOptions problem;
  std::string candidate;
  std::string db;
  std::string device_key;
  int iters = 20;
  int warmup = 5;
  std::string out_dir = "results/nsys";
  std::string nsys;
  bool exec = false;
};

std::string output_name(const GemmProblem& p, const std::optional<Candidate>& c) {
  return file_safe_name(p.key()) + (c ? "__" + file_safe_name(c->id()) : "");
}

void profile(const NsysArgs& a) {
  if (a.iters < 1) throw InputError("--iters must be at least 1");
  if (a.warmup < 0) throw InputError("--warmup must not be negative");
  const GemmProblem p = a.problem.problem();
  // nsys records whatever the run picks; a candidate is passed on only when one was named or cached.
  const std::optional<Candidate> c = resolve_candidate(p, a.candidate, a.db, a.device_key);
  std::string nsys = a.nsys;
  if (nsys.empty()) nsys = find_executable("nsys", {"/usr/local/cuda/bin/nsys"});
  if (nsys.empty()) nsys = "nsys";
  const std::string stem = a.out_dir + "/" + output_name(p, c);
  const std::vector<std::string> argv = nsys_profile_argv(nsys, stem, run_argv(p, c, a.warmup, a.iters));
  const std::vector<std::string> stats = nsys_stats_argv(nsys, stem);
  std::cout << "# " << p.key() << (c ? " " + c->id() : std::string(" (the run's own candidate choice)"))
            << ": timeline of the " << a.iters << " timed calls only (cudaProfilerStart/Stop capture range)\n"
            << "mkdir -p " << shell_quote(a.out_dir) << " && " << shell_join(argv) << "\n"
            << shell_join(stats) << "\n";
  std::cout.flush();
  if (!a.exec) return;
  std::error_code ec;
  std::filesystem::create_directories(a.out_dir, ec);
  if (ec) throw InputError("cannot create directory '" + a.out_dir + "': " + ec.message());
  int status = run_process(argv);
  if (status == 0) status = run_process(stats);
  if (status != 0) throw Error(static_cast<ExitCode>(status), "nsys exited with status " + std::to_string(status));
}

}  // namespace

void register_nsys(CLI::App& app) {
  auto a = std::make_shared<NsysArgs>();
  auto* cmd = app.add_subcommand("nsys", "Print (or --exec) the Nsight Systems commands for one case's timed calls");
  add_case_options(*cmd, a->problem);
  cmd->add_option("--candidate", a->candidate, "Candidate id to run (default: the db's cached one, else the run's)");
  cmd->add_option("--db", a->db, "Tuning db whose cached candidate the run uses");
  cmd->add_option("--device-key", a->device_key, "Which GPU's cache entry to use when the db has several")
      ->check(device_key_check());
  cmd->add_option("--iters", a->iters, "Timed calls inside the capture range")->capture_default_str();
  cmd->add_option("--warmup", a->warmup, "Warm-up calls before the capture range")->capture_default_str();
  cmd->add_option("--out-dir", a->out_dir, "Where the .nsys-rep and .sqlite go")->capture_default_str();
  cmd->add_option("--nsys", a->nsys, "The nsys executable (default: nsys on PATH)");
  cmd->add_flag("--exec", a->exec, "Run both commands; exit with nsys's status");
  cmd->callback([a] { profile(*a); });
}

}  // namespace gemmtune::cli
