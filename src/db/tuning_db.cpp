#include "db/tuning_db.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>
#include <thread>

#include <sqlite3.h>

#include "common/error.hpp"
#include "db/candidate_columns.hpp"
#include "db/schema.hpp"
#include "problem/candidate_choice.hpp"
#include "problem/device_key.hpp"

namespace gemmtune {
namespace {

// Timestamps are written by SQLite itself, so every row of one transaction gets the same clock and format.
constexpr const char* kNowSql = "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')";
// Long enough for another sweep's per-problem transaction to finish, short enough to report a stuck writer.
constexpr int kBusyTimeoutMs = 10000;

const std::string& cache_columns() {
  static const std::string columns = std::string("device_key, problem_key, ") + kCandidateColumns +
                                     ", verify_error, tolerance, " + kStatsColumns +
                                     ", run_id, origin, gemmtune_version, updated_at, margin_min, margin_evidence, fp32_equivalent";
  return columns;
}

const std::string& measurement_columns() {
  static const std::string columns = std::string("run_id, device_key, problem_key, ") + kCandidateColumns +
                                     ", status, message, verify_error, tolerance, " + kStatsColumns +
                                     ", fp32_equivalent";
  return columns;
}

constexpr const char* kRunColumns =
    "device_key, gpu_name, cc_major, cc_minor, sm_count, driver, cuda_runtime, cublaslt_version, gemmtune_version, "
    "profile, started_at, sm_clock_max_mhz";

constexpr const char* kNcuColumns =
    "device_key, problem_key, candidate_id, kernel_name, launch_index, duration_us, sm_throughput_pct, "
    "memory_throughput_pct, dram_throughput_pct, achieved_occupancy_pct, registers_per_thread, shared_mem_bytes, "
    "dram_bytes, l2_hit_rate_pct, top_stalls, cache_control, report_path, imported_at, clock_mhz";

std::string utc_now(const SqliteDb& db) {
  SqliteStatement now = db.prepare(std::string("SELECT ") + kNowSql);
  now.step();
  return now.column_text(0);
}

std::string left_unchanged(const std::string& path, const std::string& why) {
  return "refusing to use " + path + ": " + why + " (the file was left unchanged)";
}

// Everything open may refuse, checked before the first write.
void check_path(const std::string& path, TuningDb::Access access) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path file(path);
  const fs::file_status status = fs::status(file, ec);
  if (fs::exists(status)) {
    if (!fs::is_regular_file(status)) throw InputError(left_unchanged(path, "it is not a regular file"));
    return;
  }
  if (access == TuningDb::Access::ReadOnly) throw InputError("no db at " + path);
  const fs::path dir = file.parent_path();
  if (!dir.empty() && !fs::is_directory(dir, ec))
    throw InputError("cannot create db " + path + ": directory " + dir.string() + " does not exist");
}

void check_integrity(const SqliteDb& db) {
  // quick_check reads every page and checks the b-trees but not index contents: cheap enough for every open,
  // and it catches truncated and overwritten files before any query trips over them.
  SqliteStatement check = db.prepare("PRAGMA quick_check(1)");
  const std::string verdict = check.step() ? check.column_text(0) : "no answer";
  if (verdict != "ok") throw InputError(left_unchanged(db.path(), "it is damaged (quick_check: " + verdict + ")"));
}

void check_tables(const SqliteDb& db) {
  SqliteStatement find = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
  for (std::string_view table : schema_tables()) {
    find.bind(1, std::string(table));
    const bool present = find.step();
    find.reset();
    if (!present)
      throw InputError(
          left_unchanged(db.path(), "it is damaged (gemmtune table '" + std::string(table) + "' is missing)"));
  }
}

// Processes that create one file at once all switch it to WAL. The switch upgrades a read lock to a write lock,
// and SQLite answers that deadlock with SQLITE_BUSY at once instead of calling the busy handler: wait here.
void switch_to_wal(const SqliteDb& db) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (;;) {
    try {
      db.exec("PRAGMA journal_mode = WAL");
      return;
    } catch (const SqliteError& e) {
      if ((e.result_code() & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() > deadline) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

SqliteDb open_checked(const std::string& path, TuningDb::Access access) {
  check_path(path, access);
  SqliteDb db(path, access == TuningDb::Access::ReadOnly ? SqliteDb::Access::ReadOnly
                                                         : SqliteDb::Access::ReadWriteCreate);
  db.exec("PRAGMA busy_timeout = " + std::to_string(kBusyTimeoutMs));
  SchemaInfo info;
  try {
    // One snapshot: another process may be creating or migrating this file between two separate reads.
    SqliteTransaction snapshot(db, SqliteTransaction::Kind::Read);
    check_integrity(db);
    info = inspect_schema(db, schema_migrations());
    snapshot.commit();
  } catch (const SqliteError& e) {
    if (e.code() != ExitCode::BadInput) throw;
    const bool damaged = (e.result_code() & 0xff) == SQLITE_CORRUPT;
    const std::string why = damaged ? "it is damaged" : "it is not a readable SQLite database";
    throw InputError(left_unchanged(path, why + " (" + e.sqlite_message() + ")"));
  }
  const int latest = schema_migrations().back().version;
  switch (info.state) {
    case SchemaState::Foreign: {
      char id[16];
      std::snprintf(id, sizeof(id), "0x%08x", static_cast<unsigned>(info.application_id));
      throw InputError(left_unchanged(path, std::string("it is a SQLite file of another application (application_id ") +
                                                id + "), not a gemmtune db"));
    }
    case SchemaState::Newer:
      throw InputError(left_unchanged(path, "it has gemmtune schema version " + std::to_string(info.version) +
                                                ", newer than this build's " + std::to_string(latest) +
                                                "; use a newer gemmtune"));
    case SchemaState::Empty:
    case SchemaState::Older:
      if (access == TuningDb::Access::ReadOnly)
        throw InputError(left_unchanged(path, "it is not at schema version " + std::to_string(latest) +
                                                  " and was opened read-only; open it once for writing to migrate it"));
      break;
    case SchemaState::Current:
      break;
  }
  if (access == TuningDb::Access::ReadWrite) {
    // WAL: readers never block the writer, and a second sweep writing the same file waits instead of failing.
    switch_to_wal(db);
    if (info.state != SchemaState::Current) migrate_schema(db, schema_migrations());
    // With WAL, NORMAL loses at most the last transactions on power loss and never corrupts; a killed process
    // loses nothing it committed.
    db.exec("PRAGMA synchronous = NORMAL");
  }
  check_tables(db);
  db.exec("PRAGMA foreign_keys = ON");
  return db;
}

void bind_cache_entry(SqliteStatement& s, const CacheEntry& e) {
  s.bind(":device_key", e.device_key).bind(":problem_key", e.problem.key());
  bind_candidate(s, e.candidate);
  bind_stats(s, e.stats);
  s.bind(":verify_error", e.verify_error).bind(":tolerance", e.tolerance).bind(":run_id", e.run_id);
  s.bind(":origin", e.origin).bind(":gemmtune_version", e.gemmtune_version).bind(":updated_at", e.updated_at);
  if (e.evidence.known())
    s.bind(":margin_min", e.evidence.min_margin());
  else
    s.bind(":margin_min", nullptr);
  s.bind(":margin_evidence", e.evidence.encode());
  s.bind(":fp32_equivalent", e.fp32_equivalent ? 1 : 0);
}

CacheEntry read_cache_entry(const SqliteStatement& s) {
  CacheEntry e;
  e.device_key = s.column_text("device_key");
  e.problem = GemmProblem::parse_key(s.column_text("problem_key"));
  e.candidate = read_candidate(s);
  e.stats = read_stats(s);
  e.verify_error = s.column_double("verify_error");
  e.tolerance = s.column_double("tolerance");
  e.run_id = s.column_int64("run_id");
  e.origin = s.column_text("origin");
  e.gemmtune_version = s.column_text("gemmtune_version");
  e.updated_at = s.column_text("updated_at");
  try {
    e.evidence = MarginEvidence::decode(s.column_text("margin_evidence"));
  } catch (const InputError& bad) {
    throw InputError("cache entry " + e.problem.key() + ": " + bad.what());
  }
  e.fp32_equivalent = s.column_int("fp32_equivalent") != 0;
  return e;
}

void write_cache_entry(const SqliteDb& db, const CacheEntry& e) {
  // REPLACE: the row is the whole entry, and nothing refers to algo_cache rows.
  SqliteStatement insert = db.prepare("INSERT OR REPLACE INTO algo_cache (" + cache_columns() + ") VALUES (" +
                                      sql_parameters(cache_columns()) + ")");
  bind_cache_entry(insert, e);
  // An entry keeps the time its run stored it across import and merge; a fresh one is stamped now.
  if (e.updated_at.empty()) insert.bind(":updated_at", utc_now(db));
  insert.run();
}

std::optional<CacheEntry> find_cache_entry(const SqliteDb& db, const std::string& device_key,
                                           const std::string& problem_key) {
  SqliteStatement select = db.prepare("SELECT " + cache_columns() +
                                      " FROM algo_cache WHERE device_key = :device_key AND problem_key = :problem_key");
  select.bind(":device_key", device_key).bind(":problem_key", problem_key);
  if (!select.step()) return std::nullopt;
  return read_cache_entry(select);
}

// What a run's measurements and cache entries inherit from it.
struct RunOwner {
  std::string device_key;
  std::string gemmtune_version;
};

RunOwner run_owner(const SqliteDb& db, std::int64_t run_id) {
  SqliteStatement select = db.prepare("SELECT device_key, gemmtune_version FROM runs WHERE id = ?1");
  select.bind(1, run_id);
  if (!select.step()) throw InputError("no run " + std::to_string(run_id) + " in " + db.path());
  return {select.column_text(0), select.column_text(1)};
}

CacheContender contender(const CacheEntry& e) { return {e.run_id, !e.origin.empty(), e.stats.median_us}; }

// Import and merge: per (device key, problem key) the entry merge_replaces_cached keeps.
void merge_cache_entry(const SqliteDb& db, const CacheEntry& in, MergeCounts& counts) {
  const std::optional<CacheEntry> current = find_cache_entry(db, in.device_key, in.problem.key());
  if (current && !merge_replaces_cached(contender(*current), contender(in))) {
    ++counts.kept;
    return;
  }
  ++(current ? counts.replaced : counts.added);
  write_cache_entry(db, in);
}

std::vector<std::string> split_columns(const std::string& columns) {
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start < columns.size()) {
    std::size_t end = columns.find(',', start);
    if (end == std::string::npos) end = columns.size();
    const std::size_t first = columns.find_first_not_of(' ', start);
    names.push_back(columns.substr(first, end - first));
    start = end + 1;
  }
  return names;
}

// "a, b" with prefix "s." is "s.a, s.b": the select list of an INSERT ... SELECT from an attached db.
std::string prefixed_columns(const std::string& columns, const std::string& prefix) {
  std::string out;
  for (const std::string& name : split_columns(columns)) out += (out.empty() ? "" : ", ") + prefix + name;
  return out;
}

// "a, b" with prefix "m." is "m.a AS a, m.b AS b": columns of a join, read back by their own names.
std::string aliased_columns(const std::string& columns, const std::string& prefix) {
  std::string out;
  for (const std::string& name : split_columns(columns))
    out += (out.empty() ? "" : ", ") + prefix + name + " AS " + name;
  return out;
}

// Another db file, attached to this connection under a schema name for as long as the object lives. ATTACH and
// DETACH cannot run inside a transaction: the object must outlive the transaction that reads through it.
class AttachedDb {
 public:
  AttachedDb(const SqliteDb& db, const std::string& path, const std::string& schema) : db_(db), schema_(schema) {
    SqliteStatement attach = db.prepare("ATTACH DATABASE ?1 AS " + schema);
    attach.bind(1, path).run();
  }
  ~AttachedDb() {
    try {
      db_.exec("DETACH DATABASE " + schema_);
    } catch (const Error&) {
      // Only a connection in the middle of a failed transaction refuses; closing it detaches anyway.
    }
  }
  AttachedDb(const AttachedDb&) = delete;
  AttachedDb& operator=(const AttachedDb&) = delete;

 private:
  const SqliteDb& db_;
  std::string schema_;
};

}  // namespace

TuningDb::TuningDb(const std::string& path, Access access) : db_(open_checked(path, access)) {}

std::int64_t TuningDb::begin_run(const RunInfo& run) {
  SqliteTransaction tx(db_);
  SqliteStatement insert =
      db_.prepare(std::string("INSERT INTO runs (") + kRunColumns +
                  ") VALUES (:device_key, :gpu_name, :cc_major, :cc_minor, :sm_count, :driver, :cuda_runtime, "
                  ":cublaslt_version, :gemmtune_version, :profile, COALESCE(NULLIF(:started_at, ''), " +
                  kNowSql + "), :sm_clock_max_mhz)");
  const DeviceIdentity& d = run.device;
  insert.bind(":device_key", d.key()).bind(":gpu_name", d.gpu_name).bind(":cc_major", d.cc_major);
  insert.bind(":cc_minor", d.cc_minor).bind(":sm_count", d.sm_count).bind(":driver", d.driver);
  insert.bind(":cuda_runtime", d.cuda_runtime).bind(":cublaslt_version", static_cast<std::int64_t>(d.cublaslt_version));
  insert.bind(":gemmtune_version", run.gemmtune_version).bind(":profile", run.profile);
  insert.bind(":started_at", run.started_at).bind(":sm_clock_max_mhz", run.sm_clock_max_mhz);
  insert.run();
  const std::int64_t id = db_.last_insert_rowid();
  tx.commit();
  return id;
}

void TuningDb::finish_run(std::int64_t run_id) {
  SqliteTransaction tx(db_);
  SqliteStatement update = db_.prepare(std::string("UPDATE runs SET finished_at = ") + kNowSql + " WHERE id = ?1");
  update.bind(1, run_id).run();
  if (db_.changes() != 1) throw InputError("no run " + std::to_string(run_id) + " in " + db_.path());
  tx.commit();
}

void TuningDb::store_problem(std::int64_t run_id, const GemmProblem& p, const std::vector<MeasurementRecord>& records,
                             const CacheDecision* decision) {
  const std::string problem_key = p.key();
  SqliteTransaction tx(db_);
  const RunOwner owner = run_owner(db_, run_id);
  const std::string& device_key = owner.device_key;
  for (const MeasurementRecord& r : records) {
    if (r.problem != p)
      throw CheckError("store_problem(" + problem_key + ") was given a record of " + r.problem.key());
    if (!r.device_key.empty() && r.device_key != device_key)
      throw CheckError("store_problem: record of device '" + r.device_key + "' in run " + std::to_string(run_id) +
                       " of device '" + device_key + "'");
  }

  SqliteStatement insert = db_.prepare("INSERT INTO measurements (" + measurement_columns() + ") VALUES (" +
                                       sql_parameters(measurement_columns()) + ")");
  for (const MeasurementRecord& r : records) {
    insert.bind(":run_id", run_id).bind(":device_key", device_key).bind(":problem_key", problem_key);
    bind_candidate(insert, r.candidate);
    insert.bind(":status", std::string(to_string(r.status))).bind(":message", r.message);
    insert.bind(":verify_error", r.verify_error).bind(":tolerance", r.tolerance);
    insert.bind(":fp32_equivalent", r.fp32_equivalent ? 1 : 0);
    bind_stats(insert, r.stats);
    insert.run();
  }

  SqliteStatement done = db_.prepare(std::string("INSERT OR REPLACE INTO problems_done VALUES (?1, ?2, ?3, ") +
                                     kNowSql + ")");
  done.bind(1, device_key).bind(2, problem_key).bind(3, run_id).run();

  if (decision && (decision->record < records.data() || decision->record >= records.data() + records.size()))
    throw CheckError("store_problem(" + problem_key + "): the decision names a record that is not one of its records");
  if (const MeasurementRecord* best = decision ? decision->record : chosen_candidate(records)) {
    const std::optional<CacheEntry> current = find_cache_entry(db_, device_key, problem_key);
    if (!current || run_replaces_cached(contender(*current), {run_id, false, best->stats.median_us})) {
      CacheEntry e;
      e.device_key = device_key;
      e.problem = p;
      e.candidate = best->candidate;
      e.stats = best->stats;
      e.verify_error = best->verify_error;
      e.tolerance = best->tolerance;
      e.fp32_equivalent = best->fp32_equivalent;
      e.run_id = run_id;
      e.gemmtune_version = owner.gemmtune_version;
      if (decision) e.evidence = decision->evidence;
      write_cache_entry(db_, e);
    }
  }
  tx.commit();
}

bool TuningDb::problem_done(const std::string& device_key, const std::string& problem_key) const {
  SqliteStatement select = db_.prepare("SELECT 1 FROM problems_done WHERE device_key = ?1 AND problem_key = ?2");
  select.bind(1, device_key).bind(2, problem_key);
  return select.step();
}

std::optional<CacheEntry> TuningDb::cached(const std::string& device_key, const std::string& problem_key) const {
  return find_cache_entry(db_, device_key, problem_key);
}

std::vector<CacheEntry> TuningDb::cache_entries(const CacheFilter& filter) const {
  // The device key narrows in SQL (the runtime's load); mode and shape need the parsed key.
  SqliteStatement select = db_.prepare("SELECT " + cache_columns() +
                                       " FROM algo_cache WHERE ?1 = '' OR device_key = ?1"
                                       " ORDER BY device_key, problem_key");
  select.bind(1, filter.device_key);
  std::vector<CacheEntry> entries;
  while (select.step()) {
    CacheEntry e = read_cache_entry(select);
    if (filter.matches(e)) entries.push_back(std::move(e));
  }
  return entries;
}

MergeCounts TuningDb::merge_cache_entries(const std::vector<CacheEntry>& entries) {
  for (const CacheEntry& in : entries)
    if (in.origin.empty()) throw CheckError("merge_cache_entries: entry " + in.problem.key() + " names no origin");
  MergeCounts counts;
  SqliteTransaction tx(db_);
  for (const CacheEntry& in : entries) merge_cache_entry(db_, in, counts);
  tx.commit();
  return counts;
}

DbMergeCounts TuningDb::merge_db(const std::string& source_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::equivalent(source_path, db_.path(), ec)) throw InputError("cannot merge " + source_path + " into itself");
  {
    // Refuses, before any write, what is not a gemmtune db at this schema version or holds a key it never wrote.
    const TuningDb check(source_path, Access::ReadOnly);
    check.require_valid_device_keys();
  }
  const AttachedDb source(db_, source_path, "src");
  DbMergeCounts counts;
  SqliteTransaction tx(db_);
  db_.exec("DROP TABLE IF EXISTS temp.merge_run_map; DROP TABLE IF EXISTS temp.merge_problems;"
           "CREATE TEMP TABLE merge_run_map (src_id INTEGER PRIMARY KEY, dst_id INTEGER NOT NULL)");

  // Runs: one already here (the same fields, and a problem of the source run measured under it) is reused, so a
  // db merged twice is not copied twice, while two shards that started in the same second stay two runs.
  std::string same_run;
  for (const std::string& column : split_columns(kRunColumns))
    same_run += (same_run.empty() ? "" : " AND ") + ("d." + column + " = s." + column);
  SqliteStatement src_runs = db_.prepare("SELECT id FROM src.runs ORDER BY id");
  SqliteStatement probe = db_.prepare("SELECT problem_key FROM src.measurements WHERE run_id = ?1 ORDER BY id LIMIT 1");
  SqliteStatement match = db_.prepare(
      "SELECT d.id FROM main.runs d, src.runs s WHERE s.id = ?1 AND " + same_run +
      " AND (?2 IS NULL OR EXISTS (SELECT 1 FROM main.measurements m WHERE m.run_id = d.id AND m.problem_key = ?2))"
      " ORDER BY d.id LIMIT 1");
  SqliteStatement insert_run = db_.prepare(std::string("INSERT INTO main.runs (") + kRunColumns +
                                           ", finished_at) SELECT " + prefixed_columns(kRunColumns, "s.") +
                                           ", s.finished_at FROM src.runs s WHERE s.id = ?1");
  SqliteStatement finish_run = db_.prepare(
      "UPDATE main.runs SET finished_at = (SELECT finished_at FROM src.runs WHERE id = ?2) "
      "WHERE id = ?1 AND finished_at IS NULL");
  SqliteStatement map_run = db_.prepare("INSERT INTO temp.merge_run_map VALUES (?1, ?2)");
  std::map<std::int64_t, std::int64_t> run_map;
  while (src_runs.step()) {
    const std::int64_t src_id = src_runs.column_int64(0);
    probe.bind(1, src_id);
    if (probe.step())
      match.bind(2, probe.column_text(0));
    else
      match.bind(2, nullptr);
    probe.reset();
    match.bind(1, src_id);
    std::int64_t dst_id = 0;
    if (match.step()) {
      dst_id = match.column_int64(0);
      match.reset();
      finish_run.bind(1, dst_id).bind(2, src_id).run();
      ++counts.runs_present;
    } else {
      match.reset();
      insert_run.bind(1, src_id).run();
      dst_id = db_.last_insert_rowid();
      ++counts.runs_added;
    }
    map_run.bind(1, src_id).bind(2, dst_id).run();
    run_map[src_id] = dst_id;
  }

  // Measurements: per (run, problem), all of them or, when that run already has that problem here, none. The set
  // is fixed before the copy, so the copy cannot see its own rows.
  db_.exec("CREATE TEMP TABLE merge_problems AS SELECT DISTINCT s.run_id AS src_id, s.device_key, s.problem_key "
           "FROM src.measurements s JOIN temp.merge_run_map r ON r.src_id = s.run_id WHERE NOT EXISTS ("
           "SELECT 1 FROM main.measurements t WHERE t.run_id = r.dst_id AND t.device_key = s.device_key "
           "AND t.problem_key = s.problem_key)");
  SqliteStatement problems = db_.prepare("SELECT count(*) FROM temp.merge_problems");
  problems.step();
  counts.problems_added = problems.column_int(0);
  problems.reset();  // a statement still reading a table keeps it from being dropped
  const std::string copied = std::string("device_key, problem_key, ") + kCandidateColumns +
                             ", status, message, verify_error, tolerance, " + kStatsColumns;
  SqliteStatement copy = db_.prepare(
      "INSERT INTO main.measurements (run_id, " + copied + ") SELECT r.dst_id, " + prefixed_columns(copied, "s.") +
      " FROM src.measurements s JOIN temp.merge_run_map r ON r.src_id = s.run_id JOIN temp.merge_problems p"
      " ON p.src_id = s.run_id AND p.device_key = s.device_key AND p.problem_key = s.problem_key ORDER BY s.id");
  copy.run();
  counts.measurements_added = db_.changes();

  SqliteStatement new_done = db_.prepare(
      "SELECT count(*) FROM src.problems_done p WHERE NOT EXISTS (SELECT 1 FROM main.problems_done d "
      "WHERE d.device_key = p.device_key AND d.problem_key = p.problem_key)");
  new_done.step();
  counts.done_added = new_done.column_int(0);
  new_done.reset();
  db_.exec("INSERT INTO main.problems_done (device_key, problem_key, run_id, completed_at) "
           "SELECT p.device_key, p.problem_key, r.dst_id, p.completed_at FROM src.problems_done p "
           "JOIN temp.merge_run_map r ON r.src_id = p.run_id WHERE 1 "
           "ON CONFLICT (device_key, problem_key) DO UPDATE SET run_id = excluded.run_id, "
           "completed_at = excluded.completed_at WHERE excluded.completed_at > problems_done.completed_at");

  SqliteStatement entries = db_.prepare("SELECT " + cache_columns() + " FROM src.algo_cache ORDER BY device_key, "
                                        "problem_key");
  while (entries.step()) {
    CacheEntry e = read_cache_entry(entries);
    if (e.origin.empty()) {
      const auto run = run_map.find(e.run_id);
      if (run != run_map.end())
        e.run_id = run->second;  // measured by a run that is now in this db: an entry of this db
      else
        e.origin = source_path;
    }
    merge_cache_entry(db_, e, counts.cache);
  }
  db_.exec("DROP TABLE temp.merge_run_map; DROP TABLE temp.merge_problems");
  tx.commit();
  return counts;
}

std::vector<MeasurementRecord> TuningDb::measurements(std::int64_t run_id) const {
  SqliteStatement select =
      db_.prepare("SELECT " + measurement_columns() + " FROM measurements WHERE run_id = ?1 ORDER BY id");
  select.bind(1, run_id);
  return read_measurements(select);
}

std::vector<MeasurementRecord> TuningDb::latest_measurements(const std::string& device_key) const {
  SqliteStatement select = db_.prepare(
      "SELECT " + aliased_columns(measurement_columns(), "m.") + " FROM measurements m JOIN problems_done d ON "
      "d.device_key = m.device_key AND d.problem_key = m.problem_key AND d.run_id = m.run_id "
      "WHERE m.device_key = ?1 ORDER BY m.id");
  select.bind(1, device_key);
  return read_measurements(select);
}

std::vector<OwnVariantSpeed> TuningDb::own_variant_speeds(const std::string& device_key,
                                                           const std::string& problem_key) const {
  // heuristic_first(): the first (lowest id) Ok rank-0 cuBLASLt record of the run's problem; SQLite gives the bare
  // median_us of the row that MIN(id) picked. One problem's filter is spelled out in both places, not as
  // (?2 = '' OR ...), so that SQLite uses measurements_by_problem for it.
  const std::string one_problem = problem_key.empty() ? "" : " AND problem_key = ?2";
  SqliteStatement select = db_.prepare(
      "WITH h AS (SELECT run_id, problem_key, median_us, MIN(id) FROM measurements WHERE device_key = ?1 AND "
      "backend = 'lt' AND heuristic_rank = 0 AND status = 'ok'" + one_problem + " GROUP BY run_id, problem_key) "
      "SELECT m.problem_key AS problem_key, " + aliased_columns(kCandidateColumns, "m.") +
      ", h.median_us / m.median_us AS speedup FROM measurements m JOIN problems_done d ON "
      "d.device_key = m.device_key AND d.problem_key = m.problem_key AND d.run_id = m.run_id "
      "JOIN h ON h.run_id = m.run_id AND h.problem_key = m.problem_key "
      "WHERE m.device_key = ?1 AND m.backend = 'own' AND m.status = 'ok' AND m.fp32_equivalent = 0 "
      "AND m.median_us > 0" + (problem_key.empty() ? "" : " AND m.problem_key = ?2") + " ORDER BY m.problem_key");
  select.bind(1, device_key);
  if (!problem_key.empty()) select.bind(2, problem_key);
  std::vector<OwnVariantSpeed> speeds;
  std::string key;  // rows come by problem: each key is parsed once
  GemmProblem problem;
  while (select.step()) {
    OwnVariantSpeed v;
    if (std::string k = select.column_text("problem_key"); k != key) {
      problem = GemmProblem::parse_key(k);
      key = std::move(k);
    }
    v.problem = problem;
    v.candidate = read_candidate(select);
    v.speedup = select.column_double("speedup");
    speeds.push_back(std::move(v));
  }
  return speeds;
}

std::vector<MeasurementRecord> TuningDb::read_measurements(SqliteStatement& select) {
  std::vector<MeasurementRecord> records;
  while (select.step()) {
    MeasurementRecord r;
    r.device_key = select.column_text("device_key");
    r.problem = GemmProblem::parse_key(select.column_text("problem_key"));
    r.candidate = read_candidate(select);
    r.status = parse_measure_status(select.column_text("status"));
    r.message = select.column_text("message");
    r.verify_error = select.column_double("verify_error");
    r.tolerance = select.column_double("tolerance");
    r.fp32_equivalent = select.column_int("fp32_equivalent") != 0;
    r.stats = read_stats(select);
    records.push_back(std::move(r));
  }
  return records;
}

void TuningDb::require_valid_device_keys() const {
  const auto at = [&](const std::string& where, const std::string& why) {
    return InputError(db_.path() + ": " + where + ": " + why);
  };
  SqliteStatement keys = db_.prepare(
      "SELECT device_key FROM runs UNION SELECT device_key FROM measurements UNION SELECT device_key FROM "
      "problems_done UNION SELECT device_key FROM algo_cache");
  while (keys.step()) {
    try {
      parse_device_key(keys.column_text(0));
    } catch (const InputError& e) {
      throw at("device keys", e.what());
    }
  }
  // A run also keeps the fields its key was made of: a key edited into another valid one shows there.
  std::map<std::int64_t, std::string> made;
  for (const RunInfo& run : runs()) made[run.id] = run.device.key();
  SqliteStatement stored = db_.prepare("SELECT id, device_key FROM runs ORDER BY id");
  while (stored.step())
    if (stored.column_text(1) != made[stored.column_int64(0)])
      throw at("run " + std::to_string(stored.column_int64(0)),
               "device key '" + stored.column_text(1) + "' is not the one its device's fields make");
}

std::vector<RunInfo> TuningDb::runs() const {
  SqliteStatement select =
      db_.prepare(std::string("SELECT id, finished_at, ") + kRunColumns + " FROM runs ORDER BY id");
  std::vector<RunInfo> runs;
  while (select.step()) {
    RunInfo r;
    r.id = select.column_int64("id");
    r.device.gpu_name = select.column_text("gpu_name");
    r.device.cc_major = select.column_int("cc_major");
    r.device.cc_minor = select.column_int("cc_minor");
    r.device.sm_count = select.column_int("sm_count");
    r.device.driver = select.column_text("driver");
    r.device.cuda_runtime = select.column_int("cuda_runtime");
    r.device.cublaslt_version = static_cast<std::size_t>(select.column_int64("cublaslt_version"));
    r.gemmtune_version = select.column_text("gemmtune_version");
    r.profile = select.column_text("profile");
    r.started_at = select.column_text("started_at");
    r.finished_at = select.column_text("finished_at");
    r.sm_clock_max_mhz = select.column_double("sm_clock_max_mhz");
    runs.push_back(std::move(r));
  }
  return runs;
}

void TuningDb::record_misses(const std::string& device_key, const std::vector<std::string>& problem_keys) {
  for (const std::string& key : problem_keys) GemmProblem::parse_key(key);
  SqliteTransaction tx(db_);
  SqliteStatement upsert = db_.prepare(
      std::string("INSERT INTO misses VALUES (?1, ?2, 1, ") + kNowSql + ", " + kNowSql +
      ") ON CONFLICT (device_key, problem_key) DO UPDATE SET count = count + 1, last_seen = excluded.last_seen");
  for (const std::string& key : problem_keys) upsert.bind(1, device_key).bind(2, key).run();
  tx.commit();
}

std::vector<std::string> TuningDb::misses(const std::string& device_key) const {
  SqliteStatement select =
      db_.prepare("SELECT problem_key FROM misses WHERE device_key = ?1 ORDER BY count DESC, problem_key");
  select.bind(1, device_key);
  std::vector<std::string> keys;
  while (select.step()) keys.push_back(select.column_text(0));
  return keys;
}

void TuningDb::insert_ncu_metrics(const std::vector<NcuKernelMetrics>& rows) {
  SqliteTransaction tx(db_);
  // Importing a report again replaces what it gave the first time, instead of counting its kernels twice.
  SqliteStatement forget = db_.prepare("DELETE FROM ncu_metrics WHERE device_key = ?1 AND report_path = ?2");
  std::set<std::pair<std::string, std::string>> reports;
  for (const NcuKernelMetrics& m : rows) reports.emplace(m.device_key, m.report_path);
  for (const auto& [device_key, report_path] : reports) {
    forget.bind(1, device_key).bind(2, report_path);
    forget.run();
  }
  SqliteStatement insert = db_.prepare(std::string("INSERT INTO ncu_metrics (") + kNcuColumns + ") VALUES (" +
                                       sql_parameters(kNcuColumns) + ")");
  for (const NcuKernelMetrics& m : rows) {
    insert.bind(":device_key", m.device_key).bind(":problem_key", m.problem_key);
    insert.bind(":candidate_id", m.candidate_id).bind(":kernel_name", m.kernel_name);
    insert.bind(":launch_index", m.launch_index).bind(":duration_us", m.duration_us);
    insert.bind(":sm_throughput_pct", m.sm_throughput_pct).bind(":memory_throughput_pct", m.memory_throughput_pct);
    insert.bind(":dram_throughput_pct", m.dram_throughput_pct);
    insert.bind(":achieved_occupancy_pct", m.achieved_occupancy_pct);
    insert.bind(":registers_per_thread", m.registers_per_thread).bind(":shared_mem_bytes", m.shared_mem_bytes);
    insert.bind(":dram_bytes", m.dram_bytes).bind(":l2_hit_rate_pct", m.l2_hit_rate_pct);
    insert.bind(":top_stalls", m.top_stalls).bind(":cache_control", m.cache_control);
    insert.bind(":report_path", m.report_path).bind(":clock_mhz", m.clock_mhz);
    // An import stamps its rows now unless the importer recorded when it read the report.
    insert.bind(":imported_at", m.imported_at.empty() ? utc_now(db_) : m.imported_at);
    insert.run();
  }
  tx.commit();
}

std::vector<NcuKernelMetrics> TuningDb::ncu_metrics(const std::string& device_key) const {
  SqliteStatement select =
      db_.prepare(std::string("SELECT ") + kNcuColumns + " FROM ncu_metrics WHERE device_key = ?1 ORDER BY id");
  select.bind(1, device_key);
  std::vector<NcuKernelMetrics> rows;
  while (select.step()) {
    NcuKernelMetrics m;
    m.device_key = select.column_text("device_key");
    m.problem_key = select.column_text("problem_key");
    m.candidate_id = select.column_text("candidate_id");
    m.kernel_name = select.column_text("kernel_name");
    m.launch_index = select.column_int("launch_index");
    m.duration_us = select.column_double("duration_us");
    m.sm_throughput_pct = select.column_double("sm_throughput_pct");
    m.memory_throughput_pct = select.column_double("memory_throughput_pct");
    m.dram_throughput_pct = select.column_double("dram_throughput_pct");
    m.achieved_occupancy_pct = select.column_double("achieved_occupancy_pct");
    m.registers_per_thread = select.column_int("registers_per_thread");
    m.shared_mem_bytes = select.column_int64("shared_mem_bytes");
    m.dram_bytes = select.column_double("dram_bytes");
    m.l2_hit_rate_pct = select.column_double("l2_hit_rate_pct");
    m.top_stalls = select.column_text("top_stalls");
    m.cache_control = select.column_text("cache_control");
    m.report_path = select.column_text("report_path");
    m.imported_at = select.column_text("imported_at");
    m.clock_mhz = select.column_double("clock_mhz");
    rows.push_back(std::move(m));
  }
  return rows;
}

}  // namespace gemmtune
