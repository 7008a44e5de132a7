// gemmtune cache show|export|import|merge: read the algo cache, move it to another machine as JSON, combine caches.
// Every input is read and checked whole before the target db is opened, so a bad input never half-writes one.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/db_option.hpp"
#include "cli/device_key_option.hpp"
#include "common/error.hpp"
#include "db/cache_json.hpp"
#include "db/sqlite_db.hpp"
#include "db/tuning_db.hpp"
#include "tuner/sweep_from_db.hpp"
#include "tuner/sweep_report.hpp"

namespace gemmtune::cli {
namespace {

struct CacheArgs {
  std::string db;
  std::string device_key;
  std::string mode;
  std::int64_t min_dim = 0;
  std::int64_t max_dim = 0;
  bool json = false;
  std::string out;
  std::vector<std::string> inputs;
  std::string sweep_json;
};

CacheFilter make_filter(const CacheArgs& a) {
  CacheFilter f;
  f.device_key = a.device_key;
  if (!a.mode.empty()) f.mode = parse_math_mode(a.mode);
  f.min_dim = a.min_dim;
  f.max_dim = a.max_dim;
  if (f.max_dim > 0 && f.max_dim < f.min_dim) throw InputError("--max-dim is below --min-dim");
  return f;
}

// Import and merge write where sweep would: make the directory of the target db, as sweep does.
void make_parent_dir(const std::string& path) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError("cannot create directory " + dir.string() + " for " + path + ": " + ec.message());
}

std::string run_text(const CacheEntry& e) {
  return "run " + std::to_string(e.run_id) + (e.origin.empty() ? "" : " of " + e.origin);
}

void print_table(const std::vector<CacheEntry>& entries) {
  std::size_t key_width = 11, candidate_width = 9;
  for (const CacheEntry& e : entries) {
    key_width = std::max(key_width, e.problem.key().size());
    candidate_width = std::max(candidate_width, e.candidate.id().size());
  }
  const int kw = static_cast<int>(key_width), cw = static_cast<int>(candidate_width);
  std::map<std::string, int> per_device;
  std::string device;
  for (const CacheEntry& e : entries) {
    if (e.device_key != device) {
      device = e.device_key;
      std::printf("%sdevice %s\n", per_device.empty() ? "" : "\n", device.c_str());
      std::printf("  %-*s  %-*s %10s %8s %10s %9s  %s\n", kw, "problem key", cw, "candidate", "median us", "TFLOP/s",
                  "verify err", "vs heur.", "measured by (margin conditions)");
    }
    ++per_device[device];
    const double tflops = e.problem.flops() / (e.stats.median_us * 1e6);
    // The margin over heuristic-first as a program pays it, worst condition; "?" where it is not known.
    char margin[32] = "?";
    if (e.evidence.known()) std::snprintf(margin, sizeof(margin), "x%.3f", e.evidence.min_margin());
    const std::string conditions = e.evidence.known() ? " (" + e.evidence.condition_names() + ")" : "";
    std::printf("  %-*s  %-*s %10.2f %8.1f %10.2e %9s  %s%s\n", kw, e.problem.key().c_str(), cw,
                e.candidate.id().c_str(), e.stats.median_us, tflops, e.verify_error, margin, run_text(e).c_str(),
                conditions.c_str());
  }
  std::printf("%s%zu entr%s on %zu device key%s\n", entries.empty() ? "" : "\n", entries.size(),
              entries.size() == 1 ? "y" : "ies", per_device.size(), per_device.size() == 1 ? "" : "s");
}

void show(const CacheArgs& a) {
  const TuningDb db(db_or_default(a.db), TuningDb::Access::ReadOnly);
  const std::vector<CacheEntry> entries = db.cache_entries(make_filter(a));
  if (a.json)
    std::cout << cache_to_json(entries, db.path()).dump(2) << "\n";
  else
    print_table(entries);
}

void export_cache(const CacheArgs& a) {
  const TuningDb db(a.db, TuningDb::Access::ReadOnly);
  const std::vector<CacheEntry> entries = db.cache_entries(make_filter(a));
  write_cache_file(a.out, entries, db.path());
  std::printf("exported %zu entr%s of %s to %s\n", entries.size(), entries.size() == 1 ? "y" : "ies", a.db.c_str(),
              a.out.c_str());
}

void print_counts(const MergeCounts& c, const std::string& target) {
  std::printf("%s: %d added, %d replaced by a faster entry, %d kept (already as fast or faster)\n", target.c_str(),
              c.added, c.replaced, c.kept);
}

void import_cache(const CacheArgs& a) {
  const std::vector<CacheEntry> entries = read_cache_file(a.inputs.at(0));
  make_parent_dir(a.db);
  TuningDb db(a.db);
  print_counts(db.merge_cache_entries(entries), a.db);
}

void print_db_counts(const DbMergeCounts& c, const std::string& source, const std::string& target) {
  std::printf("%s <- %s: %d run%s added (%d already there), %d problem%s with %lld measurement%s, %d done-mark%s; "
              "cache %d added, %d replaced by a faster entry, %d kept\n",
              target.c_str(), source.c_str(), c.runs_added, c.runs_added == 1 ? "" : "s", c.runs_present,
              c.problems_added, c.problems_added == 1 ? "" : "s", static_cast<long long>(c.measurements_added),
              c.measurements_added == 1 ? "" : "s", c.done_added, c.done_added == 1 ? "" : "s", c.cache.added,
              c.cache.replaced, c.cache.kept);
}

// --sweep-json: the merged db's latest measurements of one device key, as the `sweep --json` document the gate reads.
void write_merged_sweep_json(const TuningDb& db, const CacheArgs& a) {
  std::string key = a.device_key;
  if (key.empty()) {
    std::set<std::string> keys;
    for (const RunInfo& r : db.runs()) keys.insert(r.device.key());
    if (keys.size() != 1)
      throw InputError("--sweep-json: " + db.path() + " has runs of " + std::to_string(keys.size()) +
                       " device keys; name one with --device-key (the merge itself is done)");
    key = *keys.begin();
  }
  make_parent_dir(a.sweep_json);
  write_sweep_json(sweep_result_from_db(db, key), a.sweep_json);
  std::printf("wrote %s: the latest measurements of %s in %s\n", a.sweep_json.c_str(), key.c_str(), db.path().c_str());
}

// `cache merge OUT.db IN...` names the target first; `cache merge --db OUT.db IN...` (the older form) by option.
// Inputs are told apart by content (SQLite's file header), not by name: a db brings everything it knows (runs,
// measurements, done-marks, cache; TuningDb::merge_db), an export its cache entries. Every input is read and
// checked before the target is opened.
void merge(const CacheArgs& a, bool db_option_given) {
  std::vector<std::string> inputs = a.inputs;
  std::string target = a.db;
  if (!db_option_given) {
    if (inputs.size() < 2) throw InputError("cache merge: expected OUT.db and at least one input (or --db OUT.db)");
    target = inputs.front();
    inputs.erase(inputs.begin());
  }
  std::vector<std::string> dbs;
  std::vector<CacheEntry> exported;
  for (const std::string& input : inputs) {
    if (has_sqlite_header(input)) {
      TuningDb(input, TuningDb::Access::ReadOnly).require_valid_device_keys();
      dbs.push_back(input);
      continue;
    }
    std::vector<CacheEntry> entries = read_cache_file(input);
    exported.insert(exported.end(), std::make_move_iterator(entries.begin()), std::make_move_iterator(entries.end()));
  }
  make_parent_dir(target);
  TuningDb db(target);
  for (const std::string& input : dbs) print_db_counts(db.merge_db(input), input, target);
  if (!exported.empty() || dbs.empty()) print_counts(db.merge_cache_entries(exported), target);
  if (!a.sweep_json.empty()) write_merged_sweep_json(db, a);
}

void add_filter_options(CLI::App* cmd, CacheArgs& a) {
  cmd->add_option("--device-key", a.device_key, "Only entries of this device key (see `gemmtune devices`)")
      ->check(device_key_check());
  cmd->add_option("--mode", a.mode, "Only entries of this math mode (fp32, tf32, 3xtf32)");
}

}  // namespace

void register_cache(CLI::App& app) {
  auto* cache = app.add_subcommand("cache", "Show, export, import and merge the algo cache (best verified candidates)");
  cache->require_subcommand(1);
  auto a = std::make_shared<CacheArgs>();

  auto* show_cmd = cache->add_subcommand("show", "Print the cache as a table (or its export JSON with --json)");
  show_cmd->add_option("--db", a->db, std::string("The db to read") + kDefaultDbHelp);
  add_filter_options(show_cmd, *a);
  show_cmd->add_flag("--json", a->json, "Print the export document instead of a table");
  show_cmd->callback([a] { show(*a); });

  auto* export_cmd = cache->add_subcommand("export", "Write the cache, or a filter of it, to a versioned JSON file");
  export_cmd->add_option("--db", a->db, "The db to read")->required();
  export_cmd->add_option("--out", a->out, "The JSON file to write")->required();
  add_filter_options(export_cmd, *a);
  export_cmd->add_option("--min-dim", a->min_dim, "Only problems whose m, n and k are all >= N")
      ->check(CLI::NonNegativeNumber);
  export_cmd->add_option("--max-dim", a->max_dim, "Only problems whose m, n and k are all <= N")
      ->check(CLI::PositiveNumber);
  export_cmd->callback([a] { export_cache(*a); });

  auto* import_cmd = cache->add_subcommand(
      "import", "Add an export's entries to a db (per problem the faster entry stays); a bad file changes nothing");
  import_cmd->add_option("--db", a->db, "The db to write (created if missing)")->required();
  import_cmd->add_option("file", a->inputs, "The export JSON file")->required()->expected(1);
  import_cmd->callback([a] { import_cache(*a); });

  auto* merge_cmd = cache->add_subcommand(
      "merge", "Merge dbs (runs, measurements, done-marks, cache: shard dbs become one) and exports (cache entries) "
               "into OUT.db; per device key and problem the faster cache entry stays");
  auto* merge_db_option = merge_cmd->add_option("--db", a->db, "The db to write (created if missing); without it the "
                                                              "first positional argument is the db to write");
  merge_cmd->add_option("inputs", a->inputs, "[OUT.db] then dbs or export JSON files, told apart by content")
      ->required()
      ->expected(1, -1);
  merge_cmd->add_option("--sweep-json", a->sweep_json,
                        "Also write the merged db's latest measurements as a `sweep --json` document (what `gate` "
                        "compares)");
  merge_cmd->add_option("--device-key", a->device_key, "With --sweep-json: whose measurements (needed when the db "
                                                       "has several)")
      ->check(device_key_check());
  merge_cmd->callback([a, merge_db_option] { merge(*a, merge_db_option->count() > 0); });
}

}  // namespace gemmtune::cli
