// TuningDb: gemmtune's SQLite file. Runs, every measurement of every candidate, the algo cache (best verified
// candidate per device key and problem key), what a resumed sweep skips, the runtime's cache misses and imported
// Nsight Compute metrics.
//
// Opening checks before it writes anything: a file that is not SQLite, is damaged (PRAGMA quick_check), belongs to
// another application (no gemmtune application_id) or was written by a newer gemmtune is refused with an
// InputError and left byte for byte as it was. An older gemmtune file is migrated in one transaction.
//
// Several processes may write one file: WAL journal, a 10 s busy timeout, and every write in one BEGIN IMMEDIATE
// transaction. One object is one connection: use it from one thread at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/cache_entry.hpp"
#include "db/sqlite_db.hpp"
#include "problem/gemm_problem.hpp"
#include "problem/measurement.hpp"
#include "problem/ncu_metrics.hpp"

namespace gemmtune {

// What merge_cache_entries did with each entry it was given.
struct MergeCounts {
  int added = 0;     // no entry for its (device key, problem key) yet
  int replaced = 0;  // faster than the entry it replaced
  int kept = 0;      // not faster than the entry already there
};

// The sweep's decision for one problem, from re-timing its finalists as a program pays (problem/candidate_choice.hpp):
// the record the cache keeps (one of the problem's records) and its margin over heuristic-first.
struct CacheDecision {
  const MeasurementRecord* record = nullptr;
  MarginEvidence evidence;
};

// What merge_db brought over from one source db.
struct DbMergeCounts {
  int runs_added = 0;                // runs new to the target
  int runs_present = 0;              // runs the target already had (merged before)
  int problems_added = 0;            // (run, problem) measurement sets copied
  std::int64_t measurements_added = 0;
  int done_added = 0;                // problems_done marks new to the target
  MergeCounts cache;                 // what happened to the source's algo cache entries
};

// One own variant's speed at one tuned shape, as the run that completed the shape measured it: heuristic-first's
// median over the variant's (above 1: faster than cuBLASLt's first choice). It ranks the own variants that a
// first-use trial tries on shapes nobody tuned (runtime/variant_ranking.hpp).
struct OwnVariantSpeed {
  GemmProblem problem;
  Candidate candidate;
  double speedup = 0;
};

class TuningDb {
 public:
  enum class Access {
    ReadWrite,  // creates the file if it is missing (its directory must exist) and migrates an older schema
    ReadOnly    // the file must exist and be at this build's schema version
  };

  explicit TuningDb(const std::string& path, Access access = Access::ReadWrite);

  const std::string& path() const { return db_.path(); }

  // Stores run.device, run.gemmtune_version, run.profile and run.sm_clock_max_mhz; started_at is now unless given.
  // Returns the new run's id; ids only grow, so a larger id is a later run.
  std::int64_t begin_run(const RunInfo& run);
  void finish_run(std::int64_t run_id);

  // Stores one problem of a run in ONE transaction: every record, the problems_done mark and the algo cache
  // update. A process killed or an error thrown midway leaves every earlier problem complete and this one absent.
  // The cache keeps what the candidate-choice policy says (problem/candidate_choice.hpp): the chosen record
  // (chosen_candidate: the fastest Ok one, or cuBLASLt's first choice where it is within noise of that) is stored
  // where the device key has no entry for p, or where run_replaces_cached lets it replace the one there (an entry of
  // an earlier run or another db, or a slower one). A problem with no Ok record leaves the cache as it was.
  // Every record must be of problem p; records' device keys must be empty or the run's.
  // With a decision, its record is the one chosen (instead of chosen_candidate) and its evidence is stored with it.
  void store_problem(std::int64_t run_id, const GemmProblem& p, const std::vector<MeasurementRecord>& records,
                     const CacheDecision* decision = nullptr);

  // True once store_problem committed this problem for this device key (in any run): what `sweep --resume` skips.
  bool problem_done(const std::string& device_key, const std::string& problem_key) const;

  std::optional<CacheEntry> cached(const std::string& device_key, const std::string& problem_key) const;
  // Ordered by device key, then problem key.
  std::vector<CacheEntry> cache_entries(const CacheFilter& filter = {}) const;
  // Import and merge, in ONE transaction: per (device key, problem key) the entry merge_replaces_cached picks stays
  // (problem/candidate_choice.hpp: the faster by median); entries of different device keys never touch each other.
  // Every entry must name its origin (set_origin): an entry without one would pass for a measurement of this db.
  MergeCounts merge_cache_entries(const std::vector<CacheEntry>& entries);

  // Everything another gemmtune db knows, in ONE transaction: its runs (a run already here, recognised by its fields
  // and a problem it measured, is not copied twice), every measurement under the copied run, its problems_done
  // marks (where both have a problem, the later completion stays) and its algo cache (per device key and problem
  // key the faster entry stays, as for import). An entry measured in the source becomes an entry of this db, since
  // its run and measurements are here now; one the source had imported keeps its origin. So shard dbs merged into
  // one equal the db of one unsharded sweep, and merging the same db again changes nothing. Misses and ncu metrics
  // stay where they were. The source must be a gemmtune db at this build's schema version, and not this file.
  DbMergeCounts merge_db(const std::string& source_path);

  // In the order they were stored; run_id is a run of this db.
  std::vector<MeasurementRecord> measurements(std::int64_t run_id) const;
  std::vector<RunInfo> runs() const;
  // Throws InputError naming this db when a key in it is not one gemmtune writes (problem/device_key.hpp) or a run's
  // key is not the one its device's fields make: what merge_db checks of its source before writing anything.
  void require_valid_device_keys() const;
  // Per problem this device key has done, the measurements of the run that completed it last: one sweep's records
  // whether it ran as one process or as shards merged into this db. In the order they were stored.
  std::vector<MeasurementRecord> latest_measurements(const std::string& device_key) const;
  // Per problem this device key has done, every own variant that measured Ok in the run that completed it, against
  // that run's heuristic-first (candidate_choice.hpp); a problem without one gives none. Candidates the
  // fp32-equivalent policy admitted are left out: whether one may run is decided per cache entry, with its k.
  // Ordered by problem key (a sort by candidate too made a 2,880-problem db's read 1.5x slower). With a problem key,
  // that problem's only.
  std::vector<OwnVariantSpeed> own_variant_speeds(const std::string& device_key,
                                                  const std::string& problem_key = {}) const;

  // Counts one miss per key (a key listed twice counts twice); one transaction. Keys must parse.
  void record_misses(const std::string& device_key, const std::vector<std::string>& problem_keys);
  // Most-missed first.
  std::vector<std::string> misses(const std::string& device_key) const;

  void insert_ncu_metrics(const std::vector<NcuKernelMetrics>& rows);  // one transaction
  std::vector<NcuKernelMetrics> ncu_metrics(const std::string& device_key) const;

 private:
  static std::vector<MeasurementRecord> read_measurements(SqliteStatement& select);

  SqliteDb db_;
};

}  // namespace gemmtune
