#include "runtime/variant_ranking.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

namespace gemmtune::runtime {

std::vector<RankedVariant> rank_own_variants(const std::vector<MeasuredNeighbor>& measured,
                                             const std::function<Candidate(const Candidate&)>& as_run) {
  struct Sum {
    Candidate candidate;
    double weighted_log = 0, weight = 0;
    int shapes = 0;
  };
  std::map<std::string, Sum> sums;  // by id: a stable order before the sort
  if (measured.empty()) return {};
  // Relative to the nearest shape's weight, so that far shapes underflow no sooner than they must.
  const double nearest = measured.front().distance;
  for (const MeasuredNeighbor& n : measured) {
    const double w = std::exp(-(n.distance * n.distance - nearest * nearest) / (kRankingSigma * kRankingSigma));
    for (const OwnVariantSpeed& v : n.shape->variants) {
      Candidate c = as_run ? as_run(v.candidate) : v.candidate;
      Sum& s = sums[c.id()];
      if (s.shapes == 0) s.candidate = std::move(c);
      s.weighted_log += w * std::log(v.speedup);
      s.weight += w;
      ++s.shapes;
    }
  }
  std::vector<RankedVariant> ranked;
  for (auto& [id, s] : sums)
    if (s.weight > 0) ranked.push_back({std::move(s.candidate), std::exp(s.weighted_log / s.weight), s.shapes});
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const RankedVariant& a, const RankedVariant& b) { return a.speedup > b.speedup; });
  return ranked;
}

std::vector<RankedVariant> exact_shape_rivals(const std::vector<OwnVariantSpeed>& at_shape, int max_rivals,
                                              const Candidate* entry) {
  double floor = 1;  // a rival's speedup must exceed it
  if (entry) {
    double entry_speedup = 0;
    for (const OwnVariantSpeed& v : at_shape)
      if (v.candidate.id() == entry->id()) entry_speedup = std::max(entry_speedup, v.speedup);
    if (entry_speedup == 0) return {};
    floor = std::max(floor, entry_speedup / (1 + kRivalWithin));
  }
  std::vector<RankedVariant> faster;
  for (const OwnVariantSpeed& v : at_shape)
    if (v.speedup > floor && !(entry && v.candidate.id() == entry->id()))
      faster.push_back({v.candidate, v.speedup, 1});
  std::sort(faster.begin(), faster.end(), [](const RankedVariant& a, const RankedVariant& b) {
    return a.speedup != b.speedup ? a.speedup > b.speedup : a.candidate.id() < b.candidate.id();
  });
  std::vector<RankedVariant> rivals;  // one per id: a problem measured by two runs lists a variant twice
  for (RankedVariant& r : faster) {
    if (static_cast<int>(rivals.size()) >= max_rivals) break;
    const bool seen = std::any_of(rivals.begin(), rivals.end(),
                                  [&](const RankedVariant& t) { return t.candidate.id() == r.candidate.id(); });
    if (!seen) rivals.push_back(std::move(r));
  }
  return rivals;
}

}  // namespace gemmtune::runtime
