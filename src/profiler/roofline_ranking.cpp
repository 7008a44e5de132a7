#include "profiler/roofline_ranking.hpp"

#include <algorithm>

#include "profiler/gpu_peaks.hpp"

namespace gemmtune {

RooflineRanking rank_by_roofline_gap(const std::vector<CacheEntry>& entries) {
  RooflineRanking ranking;
  for (const CacheEntry& e : entries) {
    const std::string gpu = gpu_name_of_device_key(e.device_key);
    const std::optional<GpuPeaks> peaks = nominal_peaks(gpu);
    if (!peaks) {
      if (std::find(ranking.unknown_gpus.begin(), ranking.unknown_gpus.end(), gpu) == ranking.unknown_gpus.end())
        ranking.unknown_gpus.push_back(gpu);
      continue;
    }
    if (e.stats.median_us <= 0) continue;
    const RooflineVerdict v = classify_roofline(e.problem.flops(), min_dram_bytes(e.problem), e.stats.median_us * 1e-6,
                                                peaks->tflops(e.problem.mode), peaks->dram_tbytes_per_s);
    ranking.cases.push_back({e, v, peaks->model});
  }
  std::stable_sort(ranking.cases.begin(), ranking.cases.end(), [](const RankedCase& a, const RankedCase& b) {
    return a.verdict.pct_of_bound < b.verdict.pct_of_bound;
  });
  return ranking;
}

}  // namespace gemmtune
