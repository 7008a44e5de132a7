#include "db/cache_json.hpp"

#include <ctime>
#include <map>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/json_fields.hpp"
#include "problem/device_key.hpp"
#include "problem/validate.hpp"

namespace gemmtune {
namespace {

using nlohmann::json;

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// The margin over heuristic-first per condition; null when not known (an older gemmtune measured the entry).
json margin_to_json(const MarginEvidence& m) {
  if (!m.known()) return nullptr;
  json conditions = json::array();
  for (const ConditionMargin& c : m.conditions)
    conditions.push_back({{"condition", c.condition}, {"margin", c.margin}, {"noise", c.noise}});
  return json{{"min", m.min_margin()}, {"conditions", std::move(conditions)}};
}

json entry_to_json(const CacheEntry& e, const std::string& source_db) {
  json candidate = e.candidate;
  // The shared Candidate json writes the rank for lt only; the export keeps every field of every candidate.
  candidate["heuristic_rank"] = e.candidate.heuristic_rank;
  return json{{"device_key", e.device_key},
              {"problem_key", e.problem.key()},
              {"problem", e.problem},
              {"candidate", std::move(candidate)},
              {"status", "ok"},
              {"stats", e.stats},
              {"verify_error", e.verify_error},
              {"tolerance", e.tolerance},
              {"fp32_equivalent", e.fp32_equivalent},
              {"run",
               {{"id", e.run_id},
                {"origin", e.origin.empty() ? source_db : e.origin},
                {"gemmtune_version", e.gemmtune_version}}},
              {"updated_at", e.updated_at},
              {"margin", margin_to_json(e.evidence)}};
}

int int_field(const JsonFields& f, const std::string& name) {
  const std::int64_t v = f.integer(name);
  if (v < INT32_MIN || v > INT32_MAX) f.fail(name, "out of range for a 32-bit integer");
  return static_cast<int>(v);
}

template <class T>
void require_equal(const JsonFields& f, const std::string& name, const T& value, const T& from_id) {
  if (!(value == from_id)) f.fail(name, "does not match the candidate id");
}

Candidate read_candidate(const JsonFields& f) {
  Candidate c = f.parse("id", [&] { return parse_canonical_candidate_id(f.string("id")); });
  require_equal(f, "backend", f.string("backend"), std::string(to_string(c.backend)));
  c.heuristic_rank = int_field(f, "heuristic_rank");
  if (c.backend == Backend::Own) {
    require_equal(f, "variant", f.string("variant"), c.own_variant);
    return c;
  }
  if (c.backend == Backend::Blas) return c;
  const JsonFields algo = f.object("algo");
  const std::pair<const char*, int> fields[] = {
      {"algo_id", c.lt.algo_id},     {"tile", c.lt.tile},       {"stages", c.lt.stages},
      {"splitk", c.lt.splitk},       {"reduction", c.lt.reduction}, {"swizzle", c.lt.swizzle},
      {"custom", c.lt.custom},       {"cluster_shape", c.lt.cluster_shape}, {"inner_shape", c.lt.inner_shape}};
  for (const auto& [name, from_id] : fields) require_equal(algo, name, int_field(algo, name), from_id);
  require_equal(f, "epilogue_kernel", f.boolean("epilogue_kernel"), c.lt_epilogue_kernel);
  // Optional: exports written before padded candidates existed have no "padded" field.
  require_equal(f, "padded", f.has("padded") && f.boolean("padded"), c.lt_padded);
  require_equal(f, "bias_in_gemm", f.has("bias_in_gemm") && f.boolean("bias_in_gemm"), c.lt_bias_in_gemm);
  return c;
}

// Optional: exports written before the margins existed have no "margin" field, and null means not known.
MarginEvidence read_margin(const JsonFields& f, const nlohmann::json& entry) {
  MarginEvidence m;
  if (!f.has("margin") || entry.at("margin").is_null()) return m;
  const JsonFields margin = f.object("margin");
  for (const JsonFields& c : margin.objects("conditions")) {
    ConditionMargin cm;
    cm.condition = c.string("condition");
    cm.margin = c.number("margin");
    cm.noise = c.number("noise");
    if (cm.condition.empty() || cm.condition.find_first_of("=~;") != std::string::npos)
      c.fail("condition", "must be a non-empty name without '=', '~' or ';'");
    if (!(cm.margin > 0)) c.fail("margin", "must be > 0");
    if (cm.noise < 0) c.fail("noise", "must be >= 0");
    m.conditions.push_back(cm);
  }
  if (!m.known()) margin.fail("conditions", "must not be empty (write null for an unknown margin)");
  return m;
}

CacheEntry read_entry(const JsonFields& f, const nlohmann::json& entry) {
  CacheEntry e;
  e.device_key = f.string("device_key");
  if (e.device_key.empty()) f.fail("device_key", "must not be empty");
  f.parse("device_key", [&] { return parse_device_key(e.device_key); });
  const std::string problem_key = f.string("problem_key");
  e.problem = f.parse("problem_key", [&] { return parse_canonical_problem_key(problem_key); });
  const JsonFields problem = f.object("problem");
  problem.string("key");
  require_problem_fields_match(problem, e.problem);
  e.candidate = read_candidate(f.object("candidate"));
  const std::string status = f.string("status");
  if (status != "ok") f.fail("status", "'" + status + "': only verified (ok) entries belong in a cache");
  e.stats = read_timing_stats(f.object("stats"), true);
  e.verify_error = f.number("verify_error");
  e.tolerance = f.number("tolerance");
  require_verified(FieldContext(f), e.verify_error, e.tolerance);
  // Absent in exports of builds before the fp32-equivalent policy, whose entries it never admitted.
  e.fp32_equivalent = f.has("fp32_equivalent") && f.boolean("fp32_equivalent");
  const JsonFields run = f.object("run");
  e.run_id = run.integer("id");
  if (e.run_id < 0) run.fail("id", "must be >= 0");
  e.origin = run.string("origin");
  e.gemmtune_version = run.string("gemmtune_version");
  e.updated_at = f.string("updated_at");
  e.evidence = read_margin(f, entry);
  require_iso8601(FieldContext(f), "updated_at", e.updated_at);
  return e;
}

}  // namespace

json cache_to_json(const std::vector<CacheEntry>& entries, const std::string& source_db) {
  json list = json::array();
  for (const CacheEntry& e : entries) list.push_back(entry_to_json(e, source_db));
  return json{{"schema", kCacheSchemaName},
              {"schema_version", kCacheSchemaVersion},
              {"gemmtune_version", GEMMTUNE_VERSION},
              {"exported_at", utc_now()},
              {"entries", std::move(list)}};
}

std::vector<CacheEntry> cache_from_json(const json& doc, const std::string& source) {
  const JsonFields top(doc, source);
  const std::string schema = top.string("schema");
  if (schema != kCacheSchemaName)
    top.fail("schema", "'" + schema + "' is not a gemmtune cache export (expected '" + kCacheSchemaName + "')");
  const std::int64_t version = top.integer("schema_version");
  if (version != kCacheSchemaVersion)
    top.fail("schema_version", std::to_string(version) + " is not supported (this build reads version " +
                                   std::to_string(kCacheSchemaVersion) + ")");
  top.string("gemmtune_version");
  require_iso8601(FieldContext(top), "exported_at", top.string("exported_at"));

  std::vector<CacheEntry> entries;
  std::map<std::pair<std::string, std::string>, std::size_t> seen;
  const std::vector<JsonFields> fields = top.objects("entries");
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const JsonFields& f = fields[i];
    CacheEntry e = read_entry(f, doc.at("entries").at(i));
    const auto [it, fresh] = seen.emplace(std::make_pair(e.device_key, e.problem.key()), entries.size());
    if (!fresh)
      f.fail("problem_key", "the same device key and problem key as entries[" + std::to_string(it->second) + "]");
    entries.push_back(std::move(e));
  }
  set_origin(entries, source);
  return entries;
}

void write_cache_file(const std::string& path, const std::vector<CacheEntry>& entries, const std::string& source_db) {
  write_json_file(path, cache_to_json(entries, source_db));
}

std::vector<CacheEntry> read_cache_file(const std::string& path) { return cache_from_json(read_json_file(path), path); }

}  // namespace gemmtune
