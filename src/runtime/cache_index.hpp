// CacheIndex: the algo cache of one device key, in memory, as the runtime's selection asks it: the exact problem's
// entry, and the tuned shapes of the same kind ordered by distance, with what their sweeps measured of every own
// variant.
//
// Entries of other device keys are kept out (a cuBLASLt algo or a timing from another GPU, driver or cuBLASLt
// version says nothing about this one) and counted, so the runtime can say once how many it ignored and why.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "db/cache_entry.hpp"
#include "db/tuning_db.hpp"
#include "problem/gemm_problem.hpp"

namespace gemmtune::runtime {

// Euclidean distance between two shapes in (ln m, ln n, ln k): 2× off in one dimension is ln 2 ≈ 0.69 whatever the
// size, which is how GEMM performance scales.
double log_shape_distance(const GemmProblem& a, const GemmProblem& b);

struct Neighbor {
  const CacheEntry* entry = nullptr;
  double distance = 0;
};

// A tuned shape as its sweep measured it: every own variant that ran Ok there, with its speed over heuristic-first.
struct MeasuredShape {
  GemmProblem problem;
  std::vector<OwnVariantSpeed> variants;
};

struct MeasuredNeighbor {
  const MeasuredShape* shape = nullptr;
  double distance = 0;
};

class CacheIndex {
 public:
  CacheIndex() = default;
  // Keeps the entries whose device key is device_key; the others are counted by foreign_*(). `speeds` are this
  // device key's (TuningDb::own_variant_speeds); a cache that came through import has none.
  CacheIndex(std::vector<CacheEntry> entries, const std::string& device_key, std::vector<OwnVariantSpeed> speeds = {});

  // Adds what the sweeps measured of own variants (this device key's) to what measured_neighbors() returns.
  void add_measurements(std::vector<OwnVariantSpeed> speeds);

  // The entry of exactly this problem, or null.
  const CacheEntry* exact(const GemmProblem& p) const;
  // Entries of p's kind (GemmProblem::kind_key) other than p itself, nearest first (ties: by problem key).
  std::vector<Neighbor> neighbors(const GemmProblem& p) const;
  // The measured shapes of p's kind other than p itself, nearest first (ties: by problem key).
  std::vector<MeasuredNeighbor> measured_neighbors(const GemmProblem& p) const;

  const std::string& device_key() const { return device_key_; }
  std::size_t size() const { return entries_.size(); }
  std::size_t foreign_count() const { return foreign_count_; }
  const std::vector<std::string>& foreign_device_keys() const { return foreign_keys_; }
  // One line saying how many entries of which other device keys were ignored and why; "" when none were.
  std::string foreign_warning() const;

 private:
  std::string device_key_;
  std::vector<CacheEntry> entries_;
  std::unordered_map<std::string, std::size_t> by_key_;                 // problem key -> entry
  std::unordered_map<std::string, std::vector<std::size_t>> by_kind_;   // kind key -> entries
  std::unordered_map<std::string, std::vector<MeasuredShape>> measured_by_kind_;
  std::size_t foreign_count_ = 0;
  std::vector<std::string> foreign_keys_;
};

// The cache as the runtime found it on disk. The db stays open, read-only (SQLite holds no lock between reads), so
// read_measurements can read the same file later even if it was renamed or replaced meanwhile.
struct LoadedCache {
  CacheIndex index;
  bool db_found = false;
  std::string db_path;
  std::unique_ptr<const TuningDb> db;  // null where db_found is false
  bool measurements_read = false;
};

// Reads every cache entry of db_path (read-only) and indexes those of device_key. A missing file gives an empty
// index with db_found false; a file that is not a gemmtune db, or a damaged one, throws InputError.
LoadedCache load_cache(const std::string& db_path, const std::string& device_key);

// Adds to cache.index, on its first call only, what the db's sweeps measured of every own variant for the index's
// device key. Only a first-use trial uses them and a db of 2,880 problems takes about 0.3 s to read them, so they are
// read when the first untuned problem is met, not at load. Throws what TuningDb throws.
void read_measurements(LoadedCache& cache);

}  // namespace gemmtune::runtime
