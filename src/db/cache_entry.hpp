// CacheEntry: one row of the algo cache, the chosen verified candidate (problem/candidate_choice.hpp) for a
// (device key, problem key) pair, and CacheFilter, the subset of the cache that `cache show|export` and the runtime
// ask for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "problem/candidate.hpp"
#include "problem/candidate_choice.hpp"
#include "problem/gemm_problem.hpp"
#include "problem/measurement.hpp"

namespace gemmtune {

struct CacheEntry {
  std::string device_key;
  GemmProblem problem;
  Candidate candidate;
  TimingStats stats;
  double verify_error = -1;
  double tolerance = 0;
  // Admitted by the fp32-equivalent policy: a 3xtf32 candidate for an fp32 problem, which the runtime takes only when
  // RuntimeOptions::fp32_equivalent allows it.
  bool fp32_equivalent = false;
  // The run that measured the entry: run_id is an id in the db named by origin; an empty origin means this db.
  // Entries that came through import or merge keep the (origin, run_id) of the db that measured them.
  std::int64_t run_id = 0;
  std::string origin;
  std::string gemmtune_version;  // of the build that measured it
  std::string updated_at;        // ISO-8601 UTC, when its run stored it
  // Its margin over cuBLASLt's heuristic-first as a program pays it, per measured condition (empty: not known).
  MarginEvidence evidence;
};

// Gives entries measured in the db they were read from (empty origin) that db's path, before they move to another.
void set_origin(std::vector<CacheEntry>& entries, const std::string& origin);

// Every field is optional; an empty filter matches everything.
struct CacheFilter {
  std::string device_key;            // exact device key
  std::optional<MathMode> mode;
  std::int64_t min_dim = 0;          // each of m, n and k must be >= min_dim
  std::int64_t max_dim = 0;          // and <= max_dim, when max_dim > 0

  bool matches(const CacheEntry& e) const;
};

}  // namespace gemmtune
