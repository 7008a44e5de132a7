#include "cli/sweep_shards.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <ostream>

#include "common/error.hpp"
#include "tuner/shard_plan.hpp"

namespace gemmtune::cli {
namespace {

double plan_cost_s(const SweepPlan& plan, const std::vector<std::size_t>& problems, const SweepProfile& profile,
                   const CostRates& rates) {
  double s = 0;
  for (const std::size_t i : problems) {
    const PlannedProblem& pp = plan.problems.at(i);
    s += problem_cost_s(pp.problem, expected_candidates(pp, profile.lt), profile.timing, rates);
  }
  return s;
}

std::vector<std::size_t> every_problem(const SweepPlan& plan) {
  std::vector<std::size_t> all(plan.problems.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

}  // namespace

ShardSelection select_shard(const SweepPlan& plan, const SweepProfile& profile, const std::string& shard_text,
                            int shards, const CostRates& rates) {
  ShardSelection s;
  s.plan_problems = plan.problems.size();
  s.fingerprint = plan_fingerprint(plan);
  if (shard_text.empty()) {
    s.plan = plan;
    s.estimated_s = plan_cost_s(plan, every_problem(plan), profile, rates);
    return s;
  }
  s.spec = shard_text == "auto" ? shard_from_scheduler(process_environment(), shards) : parse_shard_spec(shard_text);
  if (shards != 0 && shards != s.spec->count)
    throw InputError("--shards " + std::to_string(shards) + " disagrees with " + s.spec->source);
  const std::vector<Shard> cut = partition_plan(plan, profile, s.spec->count);
  const Shard& mine = cut.at(static_cast<std::size_t>(s.spec->index));
  s.plan = shard_plan(plan, mine);
  s.estimated_s = plan_cost_s(plan, mine.problems, profile, rates);
  return s;
}

std::string shard_summary(const ShardSelection& s) {
  const std::string estimate = " problems, estimated " + duration_text(s.estimated_s) + " on one GPU";
  if (!s.spec) return "plan " + s.fingerprint + ": " + std::to_string(s.plan_problems) + estimate;
  return "shard " + std::to_string(s.spec->index) + "/" + std::to_string(s.spec->count) + " (" + s.spec->source +
         ") of plan " + s.fingerprint + ": " + std::to_string(s.plan.problems.size()) + " of " +
         std::to_string(s.plan_problems) + estimate;
}

void print_shard_estimates(const SweepPlan& plan, const SweepProfile& profile, int count, const CostRates& rates,
                           std::ostream& out) {
  const std::vector<Shard> cut = partition_plan(plan, profile, count);
  double total = 0, longest = 0;
  std::vector<double> shard_s;
  std::vector<int> candidates;
  for (const Shard& s : cut) {
    shard_s.push_back(plan_cost_s(plan, s.problems, profile, rates));
    int n = 0;
    for (const std::size_t i : s.problems) n += expected_candidates(plan.problems[i], profile.lt);
    candidates.push_back(n);
    total += shard_s.back();
    longest = std::max(longest, shard_s.back());
  }
  out << "\nestimated time per shard for N = " << count << " (plan " << plan_fingerprint(plan) << "; "
      << rates.source << (profile.timing.prune ? "" : "; no pruning") << "):\n"
      << "  " << rates.describe() << "\n";
  char line[160];
  std::snprintf(line, sizeof(line), "  %-8s %9s %11s %10s\n", "shard", "problems", "candidates", "estimate");
  out << line;
  for (std::size_t i = 0; i < cut.size(); ++i) {
    std::snprintf(line, sizeof(line), "  %-8s %9zu %11d %10s\n",
                  (std::to_string(i) + "/" + std::to_string(count)).c_str(), cut[i].problems.size(), candidates[i],
                  duration_text(shard_s[i]).c_str());
    out << line;
  }
  std::snprintf(line, sizeof(line), "%.1f", total);
  out << "whole plan " << duration_text(total) << " (" << line << " s) of one GPU; ";
  std::snprintf(line, sizeof(line), "%.1f", longest + kProcessSetupS);
  out << count << " shard" << (count == 1 ? "" : "s") << " on " << count << " GPU" << (count == 1 ? "" : "s")
      << " in parallel: about " << duration_text(longest + kProcessSetupS) << " (" << line
      << " s: the longest shard and its process's start)\n";
}

CostRates dry_run_rates(const std::string& db_path, const SweepProfile& profile) {
  std::error_code ec;
  if (db_path.empty() || !std::filesystem::exists(db_path, ec)) return {};
  std::string note;
  CostRates rates;
  try {
    const TuningDb db(db_path, TuningDb::Access::ReadOnly);
    rates = rates_from_db(db, profile.name, profile.timing, CostRates{}, &note);
  } catch (const Error& e) {  // the plan stands without measured rates: say why they were not read
    note = e.what();
  }
  if (!note.empty()) rates.source += " (" + note + ")";
  return rates;
}

}  // namespace gemmtune::cli
