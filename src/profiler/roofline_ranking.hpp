// Which cached cases leave the most on the table: each algo-cache entry placed on its GPU's nominal roofline, with
// the analytic minimum of DRAM bytes (what an ideal kernel moves), lowest share of its bound first. These are the
// cases `gemmtune ncu --db FILE --top N` profiles.
#pragma once

#include <string>
#include <vector>

#include "db/cache_entry.hpp"
#include "profiler/roofline.hpp"

namespace gemmtune {

struct RankedCase {
  CacheEntry entry;
  RooflineVerdict verdict;
  std::string peaks_model;  // the datasheet part whose nominal peaks were used
};

struct RooflineRanking {
  std::vector<RankedCase> cases;  // furthest below the roofline first
  std::vector<std::string> unknown_gpus;  // GPUs of entries left out: no nominal peaks for them
};

RooflineRanking rank_by_roofline_gap(const std::vector<CacheEntry>& entries);

}  // namespace gemmtune
