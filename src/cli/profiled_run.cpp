#include "cli/profiled_run.hpp"

#include "cli/case_options.hpp"
#include "common/error.hpp"
#include "db/tuning_db.hpp"
#include "profiler/process.hpp"

namespace gemmtune::cli {

std::optional<Candidate> resolve_candidate(const GemmProblem& p, const std::string& candidate_id,
                                           const std::string& db_path, const std::string& device_key) {
  if (!candidate_id.empty()) return Candidate::parse_id(candidate_id);
  if (db_path.empty()) return std::nullopt;
  const TuningDb db(db_path, TuningDb::Access::ReadOnly);
  if (!device_key.empty()) {
    if (auto entry = db.cached(device_key, p.key())) return entry->candidate;
    throw InputError("db '" + db_path + "' has no cached candidate for " + p.key() + " on '" + device_key + "'");
  }
  std::vector<CacheEntry> entries;
  for (CacheEntry& e : db.cache_entries())
    if (e.problem == p) entries.push_back(std::move(e));
  if (entries.empty()) throw InputError("db '" + db_path + "' has no cached candidate for " + p.key());
  if (entries.size() > 1) {
    std::string keys;
    for (const CacheEntry& e : entries) keys += "\n  " + e.device_key;
    throw InputError("db '" + db_path + "' caches " + p.key() + " for several GPUs; choose one with --device-key:" +
                     keys);
  }
  return entries.front().candidate;
}

std::vector<std::string> run_argv(const GemmProblem& p, const std::optional<Candidate>& c, int warmup, int iters) {
  std::vector<std::string> argv = {self_executable(), "run"};
  const std::vector<std::string> options = case_arguments(p);
  argv.insert(argv.end(), options.begin(), options.end());
  if (c) argv.insert(argv.end(), {"--candidate", c->id()});
  argv.insert(argv.end(), {"--warmup", std::to_string(warmup), "--iters", std::to_string(iters)});
  return argv;
}

}  // namespace gemmtune::cli
