#include "tuner/shard_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <queue>
#include <utility>

#include "common/error.hpp"

namespace gemmtune {
namespace {

// FNV-1a, 64 bit: small, and the same on every machine.
void fnv1a(std::uint64_t& h, const std::string& s) {
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  h ^= 0xff;  // a separator no key contains, so "ab"+"c" differs from "a"+"bc"
  h *= 1099511628211ull;
}

}  // namespace

std::vector<Shard> partition_plan(const SweepPlan& plan, const SweepProfile& profile, int count) {
  if (count < 1) throw InputError("a plan is cut into at least one shard, not " + std::to_string(count));
  const std::size_t n = plan.problems.size();
  std::vector<std::int64_t> cost(n);
  for (std::size_t i = 0; i < n; ++i) cost[i] = estimated_cost_us(plan.problems[i], profile);
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Longest first; equal costs in plan order. stable_sort keeps that order for equal keys on every platform.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });

  std::vector<Shard> shards(static_cast<std::size_t>(count));
  // The least loaded shard next, the lowest-numbered among equals: (load, shard) pairs order exactly that way.
  using Load = std::pair<std::int64_t, std::size_t>;
  std::priority_queue<Load, std::vector<Load>, std::greater<Load>> loads;
  for (std::size_t s = 0; s < shards.size(); ++s) loads.push({0, s});
  for (const std::size_t i : order) {
    const auto [load, s] = loads.top();
    loads.pop();
    shards[s].problems.push_back(i);
    shards[s].estimated_us = load + cost[i];
    loads.push({shards[s].estimated_us, s});
  }
  for (Shard& s : shards) std::sort(s.problems.begin(), s.problems.end());
  return shards;
}

SweepPlan shard_plan(const SweepPlan& plan, const Shard& shard) {
  SweepPlan out;
  out.profile = plan.profile;
  for (const std::size_t i : shard.problems) out.problems.push_back(plan.problems.at(i));
  return out;
}

std::string plan_fingerprint(const SweepPlan& plan) {
  std::uint64_t h = 14695981039346656037ull;
  for (const PlannedProblem& pp : plan.problems) {
    fnv1a(h, pp.problem.key());
    for (const std::string& v : pp.own_variants) fnv1a(h, v);
    fnv1a(h, pp.lt_search);
  }
  char buf[20];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return std::string(buf, 12);
}

std::string duration_text(double seconds) {
  const long s = std::lround(seconds);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof(buf), "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  else if (s >= 60)
    std::snprintf(buf, sizeof(buf), "%ldm%02lds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof(buf), "%lds", s);
  return buf;
}

}  // namespace gemmtune
