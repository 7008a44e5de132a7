// gemmtune trace: where any program's GPU time goes, without nsys. Runs the command with our CUPTI injection
// library (and, with --gemms, the shim in front of cuBLAS's and cuBLASLt's GEMM entry points), gathers the
// per-process records into one trace file and prints the tables; `trace show` prints a saved trace's tables,
// `trace diff` how the time moved between two.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>

#include <unistd.h>

#include "cli/commands.hpp"
#include "cli/trace_libraries.hpp"
#include "common/error.hpp"
#include "common/scratch_dir.hpp"
#include "cuda/device_info.hpp"
#include "db/tuning_db.hpp"
#include "profiler/process.hpp"
#include "trace/raw_format.hpp"
#include "trace/raw_records.hpp"
#include "trace/trace_diff.hpp"
#include "trace/trace_tables.hpp"

namespace gemmtune::cli {
namespace {

namespace fs = std::filesystem;

struct TraceArgs {
  std::vector<std::string> command;
  std::string out;
  bool gemms = false;
  std::string db;
  std::string format = "table";
  std::string table;
  std::string categories;
  bool no_tables = false;
  std::vector<std::string> files;  // show: one, diff: two
};

CategoryRules category_rules(const std::string& extra) {
  CategoryRules rules = CategoryRules::load_default();
  if (!extra.empty()) rules.prepend(CategoryRules::load(extra));
  return rules;
}

// --out and --db may name directories that do not exist yet; made before the command runs, so a bad path is a
// usage error up front rather than a lost trace afterwards.
void ensure_parent_dir(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  if (path.empty() || parent.empty()) return;
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw InputError("cannot create directory '" + parent.string() + "': " + ec.message());
}

// A bad --table is a usage error before the command runs, not after.
void check_table_id(const std::string& id) {
  if (!id.empty()) trace_tables(Trace{}, CategoryRules{}, id);
}

void print_tables(const std::vector<Table>& tables, const TraceArgs& a) {
  render_tables(tables, parse_table_format(a.format), std::cout);
  std::cout.flush();
}

// --db: the tunable problems the program ran, as misses of the GPU they ran on.
void record_misses(const Trace& t, const std::string& db) {
  std::vector<std::string> keys;
  std::set<std::string> seen;
  for (const GemmUse& u : gemm_uses(t))
    if (u.tunable && seen.insert(u.label).second) keys.push_back(u.label);
  if (keys.empty()) {
    std::cerr << "gemmtune trace: no tunable GEMM problem recorded; nothing written to " << db << "\n";
    return;
  }
  int device = 0;
  for (const TraceKernel& k : t.kernels)
    if (k.gemm) {
      device = static_cast<int>(k.device);
      break;
    }
  const std::string device_key = query_device(device).identity.key();
  TuningDb(db).record_misses(device_key, keys);
  std::cerr << "gemmtune trace: recorded " << keys.size() << " GEMM problem(s) as misses in " << db << " for "
            << device_key << "; `gemmtune sweep --from-misses --db " << db << "` tunes them\n";
}

void run_trace(const TraceArgs& a) {
  if (a.command.empty()) throw InputError("trace needs a command: gemmtune trace [options] -- CMD ARGS...");
  if (!a.db.empty() && !a.gemms) throw InputError("--db records the GEMM problems --gemms finds: add --gemms");
  parse_table_format(a.format);
  check_table_id(a.table);
  ensure_parent_dir(a.out);
  ensure_parent_dir(a.db);
  const CategoryRules rules = category_rules(a.categories);
  const std::string inject = find_trace_library(kInjectLibrary);
  const std::string shim = a.gemms ? find_trace_library(kGemmShimLibrary) : "";

  const ScratchDir records("gemmtune-trace");  // the per-process record files
  std::vector<std::string> env = {std::string("CUDA_INJECTION64_PATH=") + inject,
                                  std::string("NVTX_INJECTION64_PATH=") + inject,
                                  std::string(trace_raw::kDirEnv) + "=" + records.path()};
  if (a.gemms) {
    const char* preload = std::getenv("LD_PRELOAD");
    env.push_back("LD_PRELOAD=" + shim + (preload && *preload ? std::string(":") + preload : ""));
  }
  int status = 0;
  const auto start = std::chrono::steady_clock::now();
  {
    const IgnoreInterrupts keep_running;
    status = run_process(a.command, env);
  }
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  Trace t = read_raw_records(records.path());
  t.command = a.command;
  t.exit_code = status;
  t.wall_ms = wall_ms;
  t.gemms = a.gemms;
  if (a.gemms) t.gemm_coverage = gemm_coverage(t, KernelNames(t, rules)).fraction();
  const bool recorded = !t.kernels.empty() || !t.copies.empty();
  // Asked only when nothing was recorded, so a traced run never pays for a CUDA start-up in gemmtune itself.
  std::string gpu_note;
  if (!recorded) {
    try {
      cuda_device_count();
    } catch (const NoGpuError& e) {
      gpu_note = e.what();
    }
    t.gpu_note = gpu_note;
  }
  if (!a.out.empty()) {
    write_trace_file(t, a.out);
    std::cerr << "gemmtune trace: wrote " << a.out << "\n";
  }
  if (!a.no_tables) print_tables(trace_tables(t, rules, a.table), a);
  if (!a.db.empty()) record_misses(t, a.db);
  if (!recorded && !gpu_note.empty()) {
    // The command ran; it recorded nothing because there is no GPU. A command that failed here failed for it.
    if (status != 0) throw NoGpuError(gpu_note + " (the command exited with status " + std::to_string(status) + ")");
    std::cerr << "gemmtune trace: " << gpu_note << "; the command ran without GPU activity\n";
  }
  if (status != 0)
    throw Error(static_cast<ExitCode>(status), "the traced command exited with status " + std::to_string(status));
}

}  // namespace

void register_trace(CLI::App& app) {
  auto a = std::make_shared<TraceArgs>();
  auto* cmd = app.add_subcommand("trace", "Run a command and show where its GPU time goes (kernels, copies, NVTX "
                                          "ranges, GEMMs), from CUPTI; no nsys needed");
  cmd->footer("Usage: gemmtune trace [OPTIONS] -- CMD ARGS...   |   gemmtune trace show FILE.json   |   "
              "gemmtune trace diff BEFORE.json AFTER.json");
  cmd->add_option("--out", a->out, "Write the trace file (for `trace show` and `trace diff`)");
  cmd->add_flag("--gemms", a->gemms, "Record each cuBLAS and cuBLASLt GEMM call's problem and the GPU time of its kernels");
  cmd->add_option("--db", a->db, "With --gemms: record the tunable problems as misses in this tuning db");
  cmd->add_option("--format", a->format, "table, csv, json or md")->capture_default_str();
  cmd->add_option("--table", a->table, "Print one table: summary, kernels, categories, nvtx, ranges, range_kernels, gemms");
  cmd->add_option("--categories", a->categories, "Category rules tried before the default ones (a JSON file)");
  cmd->add_flag("--no-tables", a->no_tables, "Print no tables (write --out / --db only)");
  cmd->add_option("command", a->command, "The command to trace and its arguments, after --");

  auto* show = cmd->add_subcommand("show", "Print the tables of a trace file");
  show->add_option("file", a->files, "Trace file")->required()->expected(1);
  show->add_option("--format", a->format, "table, csv, json or md")->capture_default_str();
  show->add_option("--table", a->table, "Print one table (see `gemmtune trace --help`)");
  show->add_option("--categories", a->categories, "Category rules tried before the default ones (a JSON file)");
  show->callback([a] {
    parse_table_format(a->format);
    check_table_id(a->table);
    const CategoryRules rules = category_rules(a->categories);
    print_tables(trace_tables(read_trace_file(a->files.at(0)), rules, a->table), *a);
  });

  auto* diff = cmd->add_subcommand("diff", "How GPU time moved between two traces: per category, kernel and GEMM");
  diff->add_option("files", a->files, "BEFORE.json AFTER.json")->required()->expected(2);
  diff->add_option("--format", a->format, "table, csv, json or md")->capture_default_str();
  diff->add_option("--categories", a->categories, "Category rules tried before the default ones (a JSON file)");
  diff->callback([a] {
    parse_table_format(a->format);
    const CategoryRules rules = category_rules(a->categories);
    const Trace before = read_trace_file(a->files.at(0));
    const Trace after = read_trace_file(a->files.at(1));
    print_tables(trace_diff_tables(before, after, rules), *a);
  });

  cmd->callback([a, show, diff] {
    if (show->parsed() || diff->parsed()) return;
    run_trace(*a);
  });
}

}  // namespace gemmtune::cli
