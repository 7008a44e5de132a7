// The versioned JSON document of `gemmtune cache export`, read back by `cache import` and `cache merge`:
//   {"schema": "gemmtune.cache", "schema_version": 1, "gemmtune_version", "exported_at",
//    "entries": [{"device_key", "problem_key", "problem", "candidate", "status": "ok", "stats", "verify_error",
//                 "tolerance", "run": {"id", "origin", "gemmtune_version"}, "updated_at"}]}
// A candidate is written field by field (id, backend, own variant or every cuBLASLt algo field), and the reader
// checks the fields against the id, so an edited or damaged file cannot pass for a different algo.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "db/cache_entry.hpp"

namespace gemmtune {

inline constexpr const char* kCacheSchemaName = "gemmtune.cache";
inline constexpr int kCacheSchemaVersion = 1;

// Entries measured in the exporting db (empty origin) get origin = source_db, so the (origin, run id) pair still
// names the run that measured them once they live in another db.
nlohmann::json cache_to_json(const std::vector<CacheEntry>& entries, const std::string& source_db);

// Checks the WHOLE document before returning anything: schema name and version, every field's type, device keys as
// gemmtune writes them (problem/device_key.hpp), problem keys and candidate ids that parse and agree with their
// fields, sane statistics (0 < p10 <= median <= p90), status ok only, no (device key, problem key) twice. Throws
// InputError naming source, the entry index and the field. An entry whose run names no origin gets source as its
// origin.
std::vector<CacheEntry> cache_from_json(const nlohmann::json& doc, const std::string& source);

void write_cache_file(const std::string& path, const std::vector<CacheEntry>& entries, const std::string& source_db);
std::vector<CacheEntry> read_cache_file(const std::string& path);

}  // namespace gemmtune
