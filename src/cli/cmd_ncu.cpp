// gemmtune ncu: the Nsight Compute command line that profiles exactly one case's timed calls (or those of the N
// cached cases furthest below their roofline), and `gemmtune ncu import`, which stores a report's metrics per case.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include "cli/case_options.hpp"
#include "cli/commands.hpp"
#include "cli/device_key_option.hpp"
#include "cli/profiled_run.hpp"
#include "common/error.hpp"
#include "db/tuning_db.hpp"
#include "profiler/ncu_command.hpp"
#include "profiler/ncu_import.hpp"
#include "profiler/process.hpp"
#include "profiler/roofline_ranking.hpp"
#include "profiler/shell_quote.hpp"

namespace gemmtune::cli {
namespace {

struct NcuArgs {
  CaseOptions problem;
  std::string candidate;
  std::string db;
  std::string device_key;
  int top = 0;
  std::string set = "quick";
  std::vector<std::string> sections;
  std::string cache_control = "none";
  int iters = 3;
  int warmup = 5;
  std::string kernel_regex;
  std::string out_dir = "results/ncu";
  std::string ncu;
  bool exec = false;
};

struct ImportArgs {
  std::string report;
  std::string db;
  std::string device_key;
  std::string cache_control;
  std::string ncu;
};

std::string ncu_executable(const std::string& given) {
  if (!given.empty()) return given;
  const std::string found = find_executable("ncu", {"/usr/local/cuda/bin/ncu"});
  return found.empty() ? "ncu" : found;
}

struct ProfiledCase {
  GemmProblem problem;
  Candidate candidate;
  std::string note;  // why this case, for the comment line above its command
};

std::vector<ProfiledCase> cases_to_profile(const NcuArgs& a) {
  if (a.top > 0) {
    if (a.db.empty()) throw InputError("--top needs --db FILE: the cases come from its algo cache");
    if (case_given(a.problem)) throw InputError("give a case (--m --n --k ...) or --top N, not both");
    CacheFilter filter;
    filter.device_key = a.device_key;
    const TuningDb db(a.db, TuningDb::Access::ReadOnly);
    const RooflineRanking ranking = rank_by_roofline_gap(db.cache_entries(filter));
    for (const std::string& gpu : ranking.unknown_gpus)
      std::fprintf(stderr, "gemmtune: no nominal peaks for '%s': its cases are not ranked\n", gpu.c_str());
    if (ranking.cases.empty()) throw InputError("db '" + a.db + "' has no cached case on a GPU with known peaks");
    std::vector<ProfiledCase> cases;
    for (std::size_t i = 0; i < ranking.cases.size() && i < static_cast<std::size_t>(a.top); ++i) {
      const RankedCase& r = ranking.cases[i];
      char note[256];
      std::snprintf(note, sizeof(note), "%zu of %d: %.1f%% of its %s bound (%.1f of %.1f TFLOP/s, nominal %s peaks)",
                    i + 1, a.top, r.verdict.pct_of_bound, to_string(r.verdict.bound), r.verdict.achieved_tflops,
                    r.verdict.attainable_tflops, r.peaks_model.c_str());
      cases.push_back({r.entry.problem, r.entry.candidate, note});
    }
    return cases;
  }
  if (!case_given(a.problem)) throw InputError("name a case (--m --n --k ...) or --db FILE --top N");
  const GemmProblem p = a.problem.problem();
  const std::optional<Candidate> c = resolve_candidate(p, a.candidate, a.db, a.device_key);
  if (!c)
    throw InputError("ncu must know the candidate to name its NVTX range: give --candidate ID, or --db FILE with a "
                     "cached entry for " + p.key());
  return {{p, *c, "the case asked for"}};
}

NcuSectionSet section_set(const NcuArgs& a) {
  if (a.sections.empty()) return load_ncu_section_set(a.set, default_ncu_sets_dir());
  NcuSectionSet s;
  s.name = "sections";
  s.sections = a.sections;
  return s;
}

void ensure_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError("cannot create directory '" + dir + "': " + ec.message());
}

void import_report(const ImportArgs& a);

void profile(const NcuArgs& a) {
  if (a.iters < 1) throw InputError("--iters must be at least 1");
  if (a.warmup < 0) throw InputError("--warmup must not be negative");
  NcuCommandOptions o;
  o.ncu = ncu_executable(a.ncu);
  o.sections = section_set(a);
  o.cache_control = parse_ncu_cache_control(a.cache_control);
  o.profiled_calls = a.iters;
  o.kernel_regex = a.kernel_regex;

  int status = 0;
  for (const ProfiledCase& pc : cases_to_profile(a)) {
    o.export_path = a.out_dir + "/" + ncu_report_stem(pc.problem, pc.candidate, o.cache_control) + ".ncu-rep";
    const std::vector<std::string> argv =
        ncu_profile_argv(pc.problem, pc.candidate, o, run_argv(pc.problem, pc.candidate, a.warmup, a.iters));
    std::cout << "# " << pc.problem.key() << " " << pc.candidate.id() << ": " << pc.note << "\n"
              << "# ncu set '" << o.sections.name << "', --cache-control " << to_string(o.cache_control)
              << (o.cache_control == NcuCacheControl::None
                      ? " (L2 kept warm between kernels, as in the sweep's back-to-back calls)"
                      : " (caches flushed before each kernel: cold-start DRAM traffic)")
              << "\n"
              << "mkdir -p " << shell_quote(a.out_dir) << " && " << shell_join(argv) << "\n";
    if (!a.db.empty())
      std::cout << "# then: " << shell_join({self_executable(), "ncu", "import", o.export_path, "--db", a.db}) << "\n";
    std::cout.flush();
    if (!a.exec) continue;
    ensure_dir(a.out_dir);
    status = run_process(argv);
    if (status != 0) break;
    if (!a.db.empty()) import_report({o.export_path, a.db, a.device_key, "", o.ncu});
  }
  if (status != 0) throw Error(static_cast<ExitCode>(status), "ncu exited with status " + std::to_string(status));
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]);
}

// The device key of the report's GPU: given, or the only one of the db's runs on a GPU of that name.
std::string device_key_for(const TuningDb& db, const std::string& gpu_name, const std::string& given) {
  if (!given.empty()) return given;
  std::vector<std::string> keys;
  for (const RunInfo& run : db.runs())
    if (run.device.gpu_name == gpu_name && std::find(keys.begin(), keys.end(), run.device.key()) == keys.end())
      keys.push_back(run.device.key());
  if (keys.size() == 1) return keys.front();
  if (keys.empty())
    throw InputError("db '" + db.path() + "' has no run on a '" + gpu_name + "': pass --device-key KEY");
  std::string list;
  for (const std::string& k : keys) list += "\n  " + k;
  throw InputError("db '" + db.path() + "' has runs on several '" + gpu_name + "' device keys; pass --device-key:" +
                   list);
}

void import_report(const ImportArgs& a) {
  if (!std::filesystem::is_regular_file(a.report)) throw InputError("no ncu report at '" + a.report + "'");
  const ProcessOutput out = capture_process(ncu_import_argv(ncu_executable(a.ncu), a.report));
  if (out.status != 0)
    throw InputError("ncu could not read '" + a.report + "' (status " + std::to_string(out.status) +
                     "): " + out.err.substr(0, out.err.find('\n')));
  const std::string cache_control = a.cache_control.empty() ? cache_control_of_report(a.report)
                                                            : to_string(parse_ncu_cache_control(a.cache_control));
  NcuImport imported = import_ncu_kernels(NcuRawTable::parse(out.out), cache_control, a.report);
  if (imported.kernels.empty())
    throw InputError("'" + a.report + "' has no kernel inside a gemmtune case range (" +
                     std::to_string(imported.kernels_outside_cases) + " kernels outside)");

  TuningDb db(a.db);
  const std::string device_key = device_key_for(db, imported.gpu_name, a.device_key);
  for (NcuKernelMetrics& k : imported.kernels) k.device_key = device_key;
  db.insert_ncu_metrics(imported.kernels);

  std::map<std::pair<std::string, std::string>, std::vector<const NcuKernelMetrics*>> kernels_of_case;
  for (const NcuKernelMetrics& k : imported.kernels) kernels_of_case[{k.problem_key, k.candidate_id}].push_back(&k);
  std::cout << "imported " << imported.kernels.size() << " kernel(s) of " << kernels_of_case.size()
            << " case(s) from " << a.report << " (cache control " << cache_control << ") for " << device_key << "\n";
  for (const auto& [c, kernels] : kernels_of_case) {
    std::vector<double> us, mhz;
    for (const NcuKernelMetrics* k : kernels) {
      us.push_back(k->duration_us);
      mhz.push_back(k->clock_mhz);
    }
    std::printf("  %s %s: %zu kernel(s), median %.2f us at %.0f MHz\n", c.first.c_str(), c.second.c_str(),
                kernels.size(), median_of(us), median_of(mhz));
  }
  if (imported.kernels_outside_cases > 0)
    std::cout << "  skipped " << imported.kernels_outside_cases << " kernel(s) outside any case range\n";
}

}  // namespace

void register_ncu(CLI::App& app) {
  auto a = std::make_shared<NcuArgs>();
  auto* cmd = app.add_subcommand(
      "ncu", "Print (or --exec) the Nsight Compute command that profiles exactly one case's timed calls");
  add_case_options(*cmd, a->problem, false);
  cmd->add_option("--candidate", a->candidate, "Candidate id to profile (default: the db's cached one)");
  cmd->add_option("--db", a->db, "Tuning db: the cached candidate, the cases for --top, where --exec imports to");
  cmd->add_option("--device-key", a->device_key, "Which GPU's cache entries to use when the db has several")
      ->check(device_key_check());
  cmd->add_option("--top", a->top, "Profile the N cached cases furthest below their roofline")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--set", a->set, "Named section set, profiles/ncu/NAME.json (quick, full, timing)")
      ->capture_default_str();
  cmd->add_option("--section", a->sections, "An ncu section to collect (repeatable; replaces --set)")
      ->excludes(cmd->get_option("--set"));
  cmd->add_option("--cache-control", a->cache_control,
                  "none: caches as the previous kernel left them, like the sweep's back-to-back calls; "
                  "all: flushed before every kernel (ncu's own default)")
      ->check(CLI::IsMember({"none", "all"}))
      ->capture_default_str();
  cmd->add_option("--iters", a->iters, "Timed calls the profiled run makes; each one is profiled")
      ->capture_default_str();
  cmd->add_option("--warmup", a->warmup, "Warm-up calls before them, outside the profiled range")
      ->capture_default_str();
  cmd->add_option("--kernel-regex", a->kernel_regex, "Only profile kernels whose demangled name matches");
  cmd->add_option("--out-dir", a->out_dir, "Where the report goes")->capture_default_str();
  cmd->add_option("--ncu", a->ncu, "The ncu executable (default: ncu on PATH, else /usr/local/cuda/bin/ncu)");
  cmd->add_flag("--exec", a->exec, "Run the command (and import the report into --db); exit with ncu's status");

  auto imp = std::make_shared<ImportArgs>();
  auto* import_cmd = cmd->add_subcommand("import", "Store an ncu report's per-kernel metrics in the db, per case");
  import_cmd->add_option("report", imp->report, "The .ncu-rep file")->required();
  import_cmd->add_option("--db", imp->db, "Tuning db to store the metrics in")->required();
  import_cmd->add_option("--device-key", imp->device_key, "Device key to file them under (default: the db's only "
                                                          "device key for the report's GPU)")
      ->check(device_key_check());
  import_cmd->add_option("--cache-control", imp->cache_control,
                         "How the report was taken (default: read from a gemmtune report name, else unknown)")
      ->check(CLI::IsMember({"none", "all"}));
  import_cmd->add_option("--ncu", imp->ncu, "The ncu executable");
  import_cmd->callback([imp] { import_report(*imp); });

  cmd->callback([a, import_cmd] {
    if (import_cmd->parsed()) return;
    profile(*a);
  });
}

}  // namespace gemmtune::cli
