// The candidate and timing-statistics columns that the measurements and algo_cache tables share: their names for
// SELECT lists, their named parameters for INSERTs, and the code that binds and reads them.
#pragma once

#include <string>

#include "db/sqlite_db.hpp"
#include "problem/candidate.hpp"
#include "problem/measurement.hpp"

namespace gemmtune {

// "candidate_id, backend, own_variant, algo_id, ...": column names, comma-separated.
extern const char* const kCandidateColumns;
extern const char* const kStatsColumns;
// ":a, :b" for the column list "a, b": the named parameters an INSERT binds.
std::string sql_parameters(const std::string& columns);

void bind_candidate(SqliteStatement& s, const Candidate& c);
// Rebuilds the candidate from its fields and checks it against the stored id; a mismatch means a damaged row.
Candidate read_candidate(const SqliteStatement& s);
void bind_stats(SqliteStatement& s, const TimingStats& t);
TimingStats read_stats(const SqliteStatement& s);

}  // namespace gemmtune
