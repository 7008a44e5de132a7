#include "cli/sweep_shards.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>

#include "common/error.hpp"
#include "tuner/shard_plan.hpp"

namespace gemmtune::cli {

ShardSelection select_shard(const SweepPlan& plan, const SweepProfile& profile, const std::string& shard_text,
                            int shards) {
  ShardSelection s;
  s.plan_problems = plan.problems.size();
  s.fingerprint = plan_fingerprint(plan);
  if (shard_text.empty()) {
    s.plan = plan;
    for (const PlannedProblem& pp : plan.problems)
      s.estimated_s += static_cast<double>(estimated_cost_us(pp, profile)) * 1e-6;
    return s;
  }
  s.spec = shard_text == "auto" ? shard_from_scheduler(process_environment(), shards) : parse_shard_spec(shard_text);
  if (shards != 0 && shards != s.spec->count)
    throw InputError("--shards " + std::to_string(shards) + " disagrees with " + s.spec->source);
  const std::vector<Shard> cut = partition_plan(plan, profile, s.spec->count);
  const Shard& mine = cut.at(static_cast<std::size_t>(s.spec->index));
  s.plan = shard_plan(plan, mine);
  s.estimated_s = static_cast<double>(mine.estimated_us) * 1e-6;
  return s;
}

std::string shard_summary(const ShardSelection& s) {
  const std::string estimate = " problems, estimated " + duration_text(s.estimated_s) + " on one GPU";
  if (!s.spec) return "plan " + s.fingerprint + ": " + std::to_string(s.plan_problems) + estimate;
  return "shard " + std::to_string(s.spec->index) + "/" + std::to_string(s.spec->count) + " (" + s.spec->source +
         ") of plan " + s.fingerprint + ": " + std::to_string(s.plan.problems.size()) + " of " +
         std::to_string(s.plan_problems) + estimate;
}

void print_shard_estimates(const SweepPlan& plan, const SweepProfile& profile, int count, std::ostream& out) {
  const std::vector<Shard> cut = partition_plan(plan, profile, count);
  std::int64_t total = 0, longest = 0;
  for (const Shard& s : cut) {
    total += s.estimated_us;
    longest = std::max(longest, s.estimated_us);
  }
  out << "\nestimated time per shard for N = " << count << " (plan " << plan_fingerprint(plan)
      << "; a rough model calibrated on an H100, for choosing N):\n";
  char line[128];
  std::snprintf(line, sizeof(line), "  %-8s %9s %10s\n", "shard", "problems", "estimate");
  out << line;
  for (std::size_t i = 0; i < cut.size(); ++i) {
    std::snprintf(line, sizeof(line), "  %-8s %9zu %10s\n", (std::to_string(i) + "/" + std::to_string(count)).c_str(),
                  cut[i].problems.size(), duration_text(static_cast<double>(cut[i].estimated_us) * 1e-6).c_str());
    out << line;
  }
  out << "whole plan " << duration_text(static_cast<double>(total) * 1e-6) << " on one GPU; with " << count
      << " shard" << (count == 1 ? "" : "s") << " in parallel about "
      << duration_text(static_cast<double>(longest) * 1e-6) << "\n";
}

}  // namespace gemmtune::cli
