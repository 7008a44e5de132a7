#include "runtime/cache_index.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>


namespace gemmtune::runtime {
namespace {

// Nearest first; ties by problem key, so the order does not depend on the db's row order.
template <class N, class ProblemOf>
void sort_nearest_first(std::vector<N>& v, ProblemOf problem_of) {
  std::sort(v.begin(), v.end(), [&](const N& a, const N& b) {
    if (a.distance != b.distance) return a.distance < b.distance;
    return problem_of(a).key() < problem_of(b).key();
  });
}

}  // namespace

double log_shape_distance(const GemmProblem& a, const GemmProblem& b) {
  const auto d = [](std::int64_t x, std::int64_t y) {
    return std::log(static_cast<double>(x)) - std::log(static_cast<double>(y));
  };
  const double dm = d(a.m, b.m), dn = d(a.n, b.n), dk = d(a.k, b.k);
  return std::sqrt(dm * dm + dn * dn + dk * dk);
}

CacheIndex::CacheIndex(std::vector<CacheEntry> entries, const std::string& device_key,
                       std::vector<OwnVariantSpeed> speeds)
    : device_key_(device_key) {
  std::map<std::string, std::size_t> foreign;  // ordered: the warning lists keys in a stable order
  for (CacheEntry& e : entries) {
    if (e.device_key != device_key) {
      ++foreign[e.device_key];
      ++foreign_count_;
      continue;
    }
    const std::size_t i = entries_.size();
    by_key_.emplace(e.problem.key(), i);
    by_kind_[e.problem.kind_key()].push_back(i);
    entries_.push_back(std::move(e));
  }
  for (const auto& [key, count] : foreign) foreign_keys_.push_back(key);
  add_measurements(std::move(speeds));
}

void CacheIndex::add_measurements(std::vector<OwnVariantSpeed> speeds) {
  std::unordered_map<std::string, std::size_t> shape_of_key;  // problem key -> index in its kind's list
  for (const auto& [kind_key, shapes] : measured_by_kind_)
    for (std::size_t i = 0; i < shapes.size(); ++i) shape_of_key.emplace(shapes[i].problem.key(), i);
  for (OwnVariantSpeed& v : speeds) {
    std::vector<MeasuredShape>& kind = measured_by_kind_[v.problem.kind_key()];
    const auto [it, added] = shape_of_key.emplace(v.problem.key(), kind.size());
    if (added) kind.push_back({v.problem, {}});
    kind[it->second].variants.push_back(std::move(v));
  }
}

const CacheEntry* CacheIndex::exact(const GemmProblem& p) const {
  const auto it = by_key_.find(p.key());
  return it == by_key_.end() ? nullptr : &entries_[it->second];
}

std::vector<Neighbor> CacheIndex::neighbors(const GemmProblem& p) const {
  std::vector<Neighbor> out;
  const auto it = by_kind_.find(p.kind_key());
  if (it == by_kind_.end()) return out;
  for (std::size_t i : it->second) {
    const CacheEntry& e = entries_[i];
    if (e.problem == p) continue;
    out.push_back({&e, log_shape_distance(p, e.problem)});
  }
  sort_nearest_first(out, [](const Neighbor& n) -> const GemmProblem& { return n.entry->problem; });
  return out;
}

std::vector<MeasuredNeighbor> CacheIndex::measured_neighbors(const GemmProblem& p) const {
  std::vector<MeasuredNeighbor> out;
  const auto it = measured_by_kind_.find(p.kind_key());
  if (it == measured_by_kind_.end()) return out;
  for (const MeasuredShape& s : it->second) {
    if (s.problem == p) continue;
    out.push_back({&s, log_shape_distance(p, s.problem)});
  }
  sort_nearest_first(out, [](const MeasuredNeighbor& n) -> const GemmProblem& { return n.shape->problem; });
  return out;
}

std::string CacheIndex::foreign_warning() const {
  if (foreign_count_ == 0) return "";
  std::string keys;
  for (const std::string& k : foreign_keys_) keys += (keys.empty() ? "'" : ", '") + k + "'";
  return "ignoring " + std::to_string(foreign_count_) + " cache entr" + (foreign_count_ == 1 ? "y" : "ies") +
         " of other device key" + (foreign_keys_.size() == 1 ? " " : "s ") + keys + ": they were tuned on another " +
         "GPU, driver or cuBLASLt version, and their algos and timings do not carry over to this device ('" +
         device_key_ + "')";
}

LoadedCache load_cache(const std::string& db_path, const std::string& device_key) {
  LoadedCache loaded;
  loaded.db_path = db_path;
  std::error_code ec;
  if (!std::filesystem::exists(db_path, ec)) {
    loaded.index = CacheIndex({}, device_key);
    return loaded;
  }
  // Read-only: a program that only runs GEMMs must never migrate or otherwise rewrite its tuning db.
  loaded.db = std::make_unique<const TuningDb>(db_path, TuningDb::Access::ReadOnly);
  loaded.index = CacheIndex(loaded.db->cache_entries(), device_key);
  loaded.db_found = true;
  return loaded;
}

void read_measurements(LoadedCache& cache) {
  if (cache.measurements_read) return;
  cache.measurements_read = true;  // a read that throws is not retried at every later problem
  if (cache.db) cache.index.add_measurements(cache.db->own_variant_speeds(cache.index.device_key()));
}

}  // namespace gemmtune::runtime
