// gemmtune sweep: measure every candidate of every problem of a profile, keep the fastest verified one per problem.
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/db_option.hpp"
#include "cli/device_key_option.hpp"
#include "cli/list_option.hpp"
#include "cli/sweep_devices.hpp"
#include "cli/sweep_shards.hpp"
#include "common/error.hpp"
#include "cuda/device_info.hpp"
#include "profile/sweep_profile.hpp"
#include "tuner/miss_profile.hpp"
#include "tuner/plan.hpp"
#include "tuner/sweep.hpp"
#include "tuner/sweep_report.hpp"

namespace gemmtune::cli {
namespace {

struct SweepArgs {
  std::string profile;
  std::string db;  // empty: the default db, resolved when the command runs
  int device = 0;
  std::string modes;
  std::string backends;
  int top_k = 0;
  std::string json, csv;
  bool dry_run = false;
  bool resume = false;
  bool no_db = false;
  bool events = false;
  bool metrics = false;
  bool from_misses = false;
  bool fp32_equivalent = false;
  bool no_prune = false;
  std::string device_key;
  std::string shard;    // "I/N" or "auto"
  int shards = 0;       // --shards N: N for `--shard auto` in a Kubernetes Indexed Job, or for a dry run's estimates
  std::string devices;  // "all" or "0,2,3": one worker process per GPU
  bool device_given = false;
};

// The db, JSON and CSV paths are the user's; their directories are created like `mkdir -p` would.
void ensure_parent_dir(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) throw InputError("cannot create directory '" + parent.string() + "': " + ec.message());
}

// The default db's directories are made the same way, and a failure names the variable that placed it.
void ensure_db_dir(const std::string& db) {
  prepare_default_db_write(db);
  ensure_parent_dir(db);
}

// --from-misses: whose misses to read. Given, no GPU is needed (a dry run can plan another machine's misses).
std::string misses_device_key(const SweepArgs& a) {
  if (!a.device_key.empty()) return a.device_key;
  try {
    return query_device(a.device).identity.key();
  } catch (const NoGpuError& e) {
    throw NoGpuError(std::string(e.what()) + " (pass --device-key KEY to read another device's misses)");
  }
}

// What every --devices worker is given: the options that shape the plan and where results go. Each worker adds its
// own --device, --shard and --json.
std::vector<std::string> worker_args(const SweepArgs& a) {
  std::vector<std::string> args = {"--profile", a.profile};
  if (a.no_db)
    args.push_back("--no-db");
  else
    args.insert(args.end(), {"--db", a.db});
  if (!a.modes.empty()) args.insert(args.end(), {"--modes", a.modes});
  if (!a.backends.empty()) args.insert(args.end(), {"--backends", a.backends});
  if (a.top_k > 0) args.insert(args.end(), {"--top-k", std::to_string(a.top_k)});
  if (a.resume) args.push_back("--resume");
  if (a.events) args.push_back("--events");
  if (a.no_prune) args.push_back("--no-prune");
  if (a.fp32_equivalent) args.push_back("--fp32-equivalent");
  return args;
}

void check_scaleout_options(const SweepArgs& a) {
  if (a.from_misses && (!a.shard.empty() || !a.devices.empty()))
    throw InputError("--from-misses tunes one device's misses: use it without --shard and --devices");
  if (!a.shard.empty() && !a.devices.empty())
    throw InputError("--shard and --devices do not combine: give each GPU its own shard (one GPU per array task) "
                     "or sweep the whole plan with --devices");
  if (a.device_given && !a.devices.empty())
    throw InputError("--device and --devices do not combine: name the GPUs in --devices (e.g. --devices 2)");
  if (a.metrics && !a.devices.empty())
    throw InputError("--metrics reads each GPU's counters in one process: use it with --device, not --devices");
  if (a.shards != 0 && a.shard.empty() && !a.dry_run)
    throw InputError("--shards N goes with --shard auto (a Kubernetes Indexed Job) or --dry-run (estimates per shard)");
}

void run(const SweepArgs& a) {
  if (a.profile.empty() && !a.from_misses) throw InputError("--profile is required (or --from-misses)");
  check_scaleout_options(a);
  // With --from-misses, the profile (quick by default) gives only the candidate settings and the timing rule.
  SweepProfile profile = load_sweep_profile(a.profile.empty() ? "quick" : a.profile, default_profiles_dir());
  if (a.from_misses) {
    const std::string key = misses_device_key(a);
    profile = profile_from_misses(profile, a.db, key);
    if (profile.problems.empty()) {
      std::cout << "no misses recorded for '" << key << "' in " << a.db << ": nothing to tune\n";
      return;
    }
  }
  if (a.top_k > 0) profile.lt.top_k = a.top_k;
  if (a.fp32_equivalent) profile.fp32_equivalent = true;
  if (a.no_prune) profile.timing.prune = false;
  std::vector<MathMode> modes;
  for (const std::string& m : split_list(a.modes)) modes.push_back(parse_math_mode(m));
  const std::vector<std::string> backends = split_list(a.backends);
  for (const std::string& b : backends) parse_backend(b);

  const SweepPlan full_plan = make_sweep_plan(profile, modes, backends);
  if (full_plan.problems.empty()) throw InputError("the profile has no problem in the selected modes");
  // A dry run prices the plan at the rates the db's earlier runs of this profile measured, where it has any.
  const CostRates rates = a.dry_run && !a.no_db ? dry_run_rates(a.db, profile) : CostRates{};
  const ShardSelection shard = select_shard(full_plan, profile, a.shard, a.shards, rates);
  const SweepPlan& plan = shard.plan;
  if (a.dry_run) {
    print_sweep_plan(plan, profile, std::cout);
    std::cout << "\n" << shard_summary(shard) << " (" << rates.source << ")\n";
    if (shard.spec || a.shards > 0)
      print_shard_estimates(full_plan, profile, shard.spec ? shard.spec->count : a.shards, rates, std::cout);
    return;
  }
  if (!a.devices.empty()) {
    DeviceSweep request{a.devices, worker_args(a), a.json, a.csv, [&a] {
                          if (!a.no_db) ensure_db_dir(a.db);
                          for (const std::string* path : {&a.json, &a.csv})
                            if (!path->empty()) ensure_parent_dir(*path);
                        }};
    sweep_on_devices(plan, profile, request);
    return;
  }
  if (shard.spec) {
    std::cerr << "gemmtune: " << shard_summary(shard) << "\n";
    if (plan.problems.empty()) {
      std::cout << "shard " << shard.spec->index << "/" << shard.spec->count << " has no problems (the plan has "
                << shard.plan_problems << "): nothing to sweep\n";
      return;
    }
  }

  cuda_device_count();  // no GPU: say so (exit 3) before creating any output directory
  SweepOptions options;
  options.device = a.device;
  options.resume = a.resume;
  options.force_events = a.events;
  options.metrics = a.metrics;
  if (!a.no_db) {
    ensure_db_dir(a.db);
    options.db_path = a.db;
  }
  for (const std::string* path : {&a.json, &a.csv})
    if (!path->empty()) ensure_parent_dir(*path);

  const SweepResult result = run_sweep(plan, profile, options);
  print_sweep_table(result, std::cout);
  if (!a.json.empty()) write_sweep_json(result, a.json);
  if (!a.csv.empty()) write_sweep_csv(result, a.csv);
  if (result.verify_failures > 0 || result.errors > 0)
    throw CheckError(std::to_string(result.verify_failures) + " candidate(s) failed verification and " +
                     std::to_string(result.errors) + " failed to run (they were not cached; see the table and --json)");
}

}  // namespace

void register_sweep(CLI::App& app) {
  auto a = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep", "Verify and time every candidate of every problem of a profile");
  cmd->add_option("--profile", a->profile, "Profile name (profiles/NAME.json) or path to a profile file");
  cmd->add_flag("--from-misses", a->from_misses,
                "Tune the problems runtimes recorded as cache misses in --db (settings from --profile, else quick)");
  cmd->add_option("--device-key", a->device_key, "With --from-misses: whose misses (default: this GPU's)")
      ->check(device_key_check());
  cmd->add_option("--db", a->db,
                  std::string("SQLite db that keeps every measurement and the algo cache") + kDefaultDbHelp);
  cmd->add_flag("--no-db", a->no_db, "Measure without storing anything");
  auto* device_option = cmd->add_option("--device", a->device, "CUDA device index")->capture_default_str();
  cmd->add_option("--modes", a->modes, "Only these math modes, comma-separated (fp32,tf32,3xtf32)");
  cmd->add_option("--backends", a->backends, "Only these backends, comma-separated (own,lt)");
  cmd->add_option("--top-k", a->top_k, "cuBLASLt heuristic candidates per problem (overrides the profile)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--json", a->json, "Write every record (what `gemmtune gate` compares) to this JSON file");
  cmd->add_option("--csv", a->csv, "Write every record to this CSV file");
  cmd->add_flag("--dry-run", a->dry_run, "Print the plan (problems x candidates) and exit; needs no GPU");
  cmd->add_flag("--resume", a->resume, "Skip problems the db already has for this GPU (after a killed sweep)");
  cmd->add_option("--shard", a->shard,
                  "Sweep one part of the plan: I/N (0 <= I < N), or auto: from a Slurm array task "
                  "(SLURM_ARRAY_TASK_ID) or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, with --shards N)");
  cmd->add_option("--shards", a->shards, "N for --shard auto in a Kubernetes Indexed Job; with --dry-run, print the "
                                         "estimated time of each of N shards (at the rates --db's runs of the "
                                         "profile measured, if it has any)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--devices", a->devices,
                  "Sweep on several GPUs of this machine, one worker process each, into one db: all or 0,2,3");
  cmd->add_flag("--events", a->events, "Time with CUDA events instead of CUPTI kernel records");
  cmd->add_flag("--no-prune", a->no_prune,
                "Sample every candidate to convergence and time every near finalist, as a profile's \"prune\": false "
                "(the first-batch and finalist-reach rules of tuner/candidate_pruning.hpp off)");
  cmd->add_flag("--fp32-equivalent", a->fp32_equivalent,
                "fp32 problems also try our 3xtf32 variants, each admitted only where its error is within the fp32 "
                "bound and 2x cuBLASLt fp32's on that problem (as the profile's \"fp32_equivalent\": true)");
  cmd->add_flag("--metrics", a->metrics,
                "Also read DRAM bytes and SM throughput of each problem's best candidate (CUPTI range profiler) and "
                "place it on the roofline");
  cmd->callback([a, device_option] {
    a->device_given = device_option->count() > 0;
    if (!a->no_db) a->db = db_or_default(a->db);
    run(*a);
  });
}

}  // namespace gemmtune::cli
