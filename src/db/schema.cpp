#include "db/schema.hpp"

#include <string>

#include "common/error.hpp"

namespace gemmtune {
namespace {

// Version 1. A candidate is stored field by field (own_variant for our kernels; the cuBLASLt algo's fields for lt,
// so it can be rebuilt with cublasLtMatmulAlgoInit + ConfigSetAttribute and re-checked) next to its id, which is
// what queries and the gate match on. measurements and algo_cache share the candidate and statistics columns.
constexpr std::string_view kSchemaV1 = R"sql(
-- AUTOINCREMENT: run ids are never reused, so a larger id is a later run (the cache rule relies on it).
CREATE TABLE runs (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  device_key       TEXT    NOT NULL,
  gpu_name         TEXT    NOT NULL,
  cc_major         INTEGER NOT NULL,
  cc_minor         INTEGER NOT NULL,
  sm_count         INTEGER NOT NULL,
  driver           TEXT    NOT NULL,
  cuda_runtime     INTEGER NOT NULL,
  cublaslt_version INTEGER NOT NULL,
  gemmtune_version TEXT    NOT NULL,
  profile          TEXT    NOT NULL,
  started_at       TEXT    NOT NULL,
  finished_at      TEXT,                               -- NULL while running, or when the run was killed
  sm_clock_max_mhz REAL    NOT NULL
);

CREATE TABLE measurements (
  id              INTEGER PRIMARY KEY,
  run_id          INTEGER NOT NULL REFERENCES runs(id),
  device_key      TEXT    NOT NULL,
  problem_key     TEXT    NOT NULL,
  candidate_id    TEXT    NOT NULL,
  backend         TEXT    NOT NULL CHECK (backend IN ('own', 'lt')),
  own_variant     TEXT,
  algo_id         INTEGER,
  tile            INTEGER,
  stages          INTEGER,
  splitk          INTEGER,
  reduction       INTEGER,
  swizzle         INTEGER,
  custom          INTEGER,
  cluster_shape   INTEGER,
  inner_shape     INTEGER,
  epilogue_kernel INTEGER,
  heuristic_rank  INTEGER NOT NULL,
  status          TEXT    NOT NULL CHECK (status IN ('ok', 'verify_failed', 'unsupported', 'error')),
  message         TEXT    NOT NULL,
  verify_error    REAL    NOT NULL,
  tolerance       REAL    NOT NULL,
  median_us       REAL    NOT NULL,
  p10_us          REAL    NOT NULL,
  p90_us          REAL    NOT NULL,
  mean_us         REAL    NOT NULL,
  stddev_us       REAL    NOT NULL,
  min_us          REAL    NOT NULL,
  max_us          REAL    NOT NULL,
  samples         INTEGER NOT NULL,
  timer           TEXT    NOT NULL,
  sm_clock_mhz    REAL    NOT NULL,
  CHECK ((backend = 'own') = (own_variant IS NOT NULL)),
  CHECK ((backend = 'lt') = (algo_id IS NOT NULL)),
  CHECK (status <> 'ok' OR median_us > 0)
);
CREATE INDEX measurements_by_run ON measurements(run_id);
CREATE INDEX measurements_by_problem ON measurements(device_key, problem_key);

-- The algo cache: the best verified candidate per (device key, problem key). run_id is not a foreign key: an entry
-- imported from another db keeps that db's run id, and origin names that db ('' = this one).
CREATE TABLE algo_cache (
  device_key       TEXT    NOT NULL,
  problem_key      TEXT    NOT NULL,
  candidate_id     TEXT    NOT NULL,
  backend          TEXT    NOT NULL CHECK (backend IN ('own', 'lt')),
  own_variant      TEXT,
  algo_id          INTEGER,
  tile             INTEGER,
  stages           INTEGER,
  splitk           INTEGER,
  reduction        INTEGER,
  swizzle          INTEGER,
  custom           INTEGER,
  cluster_shape    INTEGER,
  inner_shape      INTEGER,
  epilogue_kernel  INTEGER,
  heuristic_rank   INTEGER NOT NULL,
  verify_error     REAL    NOT NULL CHECK (verify_error >= 0),
  tolerance        REAL    NOT NULL,
  median_us        REAL    NOT NULL CHECK (median_us > 0),
  p10_us           REAL    NOT NULL,
  p90_us           REAL    NOT NULL,
  mean_us          REAL    NOT NULL,
  stddev_us        REAL    NOT NULL,
  min_us           REAL    NOT NULL,
  max_us           REAL    NOT NULL,
  samples          INTEGER NOT NULL,
  timer            TEXT    NOT NULL,
  sm_clock_mhz     REAL    NOT NULL,
  run_id           INTEGER NOT NULL,
  origin           TEXT    NOT NULL,
  gemmtune_version TEXT    NOT NULL,
  updated_at       TEXT    NOT NULL,
  PRIMARY KEY (device_key, problem_key),
  CHECK ((backend = 'own') = (own_variant IS NOT NULL)),
  CHECK ((backend = 'lt') = (algo_id IS NOT NULL))
);

-- What `sweep --resume` skips: a row is written in the same transaction as the problem's measurements.
CREATE TABLE problems_done (
  device_key   TEXT    NOT NULL,
  problem_key  TEXT    NOT NULL,
  run_id       INTEGER NOT NULL REFERENCES runs(id),
  completed_at TEXT    NOT NULL,
  PRIMARY KEY (device_key, problem_key)
);

-- Problems a runtime asked for and found no exact entry for: the input of `sweep --from-misses`.
CREATE TABLE misses (
  device_key  TEXT    NOT NULL,
  problem_key TEXT    NOT NULL,
  count       INTEGER NOT NULL CHECK (count > 0),
  first_seen  TEXT    NOT NULL,
  last_seen   TEXT    NOT NULL,
  PRIMARY KEY (device_key, problem_key)
);

-- One row per kernel of a profiled call, from `gemmtune ncu import`; -1 marks a metric the report lacked.
CREATE TABLE ncu_metrics (
  id                     INTEGER PRIMARY KEY,
  device_key             TEXT    NOT NULL,
  problem_key            TEXT    NOT NULL,
  candidate_id           TEXT    NOT NULL,
  kernel_name            TEXT    NOT NULL,
  launch_index           INTEGER NOT NULL,
  duration_us            REAL    NOT NULL,
  sm_throughput_pct      REAL    NOT NULL,
  memory_throughput_pct  REAL    NOT NULL,
  dram_throughput_pct    REAL    NOT NULL,
  achieved_occupancy_pct REAL    NOT NULL,
  registers_per_thread   INTEGER NOT NULL,
  shared_mem_bytes       INTEGER NOT NULL,
  dram_bytes             REAL    NOT NULL,
  l2_hit_rate_pct        REAL    NOT NULL,
  top_stalls             TEXT    NOT NULL,
  cache_control          TEXT    NOT NULL,
  report_path            TEXT    NOT NULL,
  imported_at            TEXT    NOT NULL
);
CREATE INDEX ncu_metrics_by_case ON ncu_metrics(device_key, problem_key, candidate_id);
)sql";

int latest_version(const std::vector<SchemaMigration>& steps) { return steps.empty() ? 0 : steps.back().version; }

std::int64_t pragma_int(const SqliteDb& db, const char* pragma) {
  SqliteStatement s = db.prepare(std::string("PRAGMA ") + pragma);
  return s.step() ? s.column_int64(0) : 0;
}

}  // namespace

const std::vector<SchemaMigration>& schema_migrations() {
  // v2: the SM clock ncu saw while profiling, so its durations can be compared with the sweep's at equal clocks.
  // v3: a cache entry's margin over heuristic-first as a program pays it (problem/candidate_choice.hpp): its
  // minimum over the measured conditions (NULL: not known, as for every entry an older gemmtune stored) and each
  // condition's margin and noise bound.
  static const std::vector<SchemaMigration> steps = {
      {1, kSchemaV1},
      {2, "ALTER TABLE ncu_metrics ADD COLUMN clock_mhz REAL NOT NULL DEFAULT -1;"},
      {3, "ALTER TABLE algo_cache ADD COLUMN margin_min REAL CHECK (margin_min IS NULL OR margin_min > 0);"
          "ALTER TABLE algo_cache ADD COLUMN margin_evidence TEXT NOT NULL DEFAULT '';"},
      // v4: whether the fp32-equivalent policy admitted the candidate (a 3xtf32 variant for an fp32 problem).
      {4, "ALTER TABLE measurements ADD COLUMN fp32_equivalent INTEGER NOT NULL DEFAULT 0;"
          "ALTER TABLE algo_cache ADD COLUMN fp32_equivalent INTEGER NOT NULL DEFAULT 0;"}};
  return steps;
}

const std::vector<std::string_view>& schema_tables() {
  static const std::vector<std::string_view> tables = {"runs",          "measurements", "algo_cache",
                                                       "problems_done", "misses",       "ncu_metrics"};
  return tables;
}

SchemaInfo inspect_schema(const SqliteDb& db, const std::vector<SchemaMigration>& steps) {
  SchemaInfo info;
  info.application_id = static_cast<std::int32_t>(pragma_int(db, "application_id"));
  info.version = static_cast<int>(pragma_int(db, "user_version"));
  SqliteStatement objects = db.prepare("SELECT count(*) FROM sqlite_master");
  const std::int64_t object_count = objects.step() ? objects.column_int64(0) : 0;

  if (info.application_id != kGemmtuneApplicationId)
    info.state = info.application_id == 0 && info.version == 0 && object_count == 0 ? SchemaState::Empty
                                                                                     : SchemaState::Foreign;
  else if (info.version > latest_version(steps))
    info.state = SchemaState::Newer;
  else if (info.version < latest_version(steps))
    info.state = SchemaState::Older;
  else
    info.state = SchemaState::Current;
  return info;
}

void migrate_schema(const SqliteDb& db, const std::vector<SchemaMigration>& steps) {
  SqliteTransaction tx(db);
  const SchemaInfo info = inspect_schema(db, steps);
  if (info.state == SchemaState::Current) return;  // another process got here first
  if (info.state == SchemaState::Foreign || info.state == SchemaState::Newer)
    throw InputError(db.path() + " changed while it was being opened; refusing to migrate it");
  for (const SchemaMigration& step : steps)
    if (step.version > info.version) db.exec(step.sql);
  // PRAGMAs take no bound parameters; these values are compile-time integers, never input.
  db.exec("PRAGMA application_id = " + std::to_string(kGemmtuneApplicationId));
  db.exec("PRAGMA user_version = " + std::to_string(latest_version(steps)));
  tx.commit();
}

}  // namespace gemmtune
