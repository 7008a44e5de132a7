#include "db/cache_entry.hpp"

namespace gemmtune {

void set_origin(std::vector<CacheEntry>& entries, const std::string& origin) {
  for (CacheEntry& e : entries)
    if (e.origin.empty()) e.origin = origin;
}

bool CacheFilter::matches(const CacheEntry& e) const {
  if (!device_key.empty() && e.device_key != device_key) return false;
  if (mode && e.problem.mode != *mode) return false;
  for (std::int64_t dim : {e.problem.m, e.problem.n, e.problem.k}) {
    if (dim < min_dim) return false;
    if (max_dim > 0 && dim > max_dim) return false;
  }
  return true;
}

}  // namespace gemmtune
