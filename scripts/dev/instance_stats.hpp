// The statistics the graph-instance probes print: a median, and whether two orderings of the same instances agree.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace gemmtune {

inline double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const std::size_t n = x.size();
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

// Spearman's rank correlation of a and b (ties ranked by position): +1 where they order the instances alike.
inline double rank_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  const auto ranks = [](const std::vector<double>& v) {
    std::vector<std::size_t> order(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return v[x] < v[y]; });
    std::vector<double> r(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) r[order[i]] = static_cast<double>(i);
    return r;
  };
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  double d2 = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d2 += (ra[i] - rb[i]) * (ra[i] - rb[i]);
  const double n = static_cast<double>(a.size());
  return 1.0 - 6.0 * d2 / (n * (n * n - 1));
}

}  // namespace gemmtune
