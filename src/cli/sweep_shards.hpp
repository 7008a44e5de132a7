// `sweep --shard I/N | --shard auto [--shards N]`: which part of the plan this process sweeps, and what
// `--dry-run` says about the cut (each shard's problems and estimated time) so a user can choose N.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "profile/sweep_profile.hpp"
#include "tuner/plan.hpp"
#include "tuner/shard_spec.hpp"
#include "tuner/sweep_cost.hpp"

namespace gemmtune::cli {

struct ShardSelection {
  std::optional<ShardSpec> spec;  // absent: the whole plan
  SweepPlan plan;                 // the shard's problems (the whole plan when no shard was asked for)
  double estimated_s = 0;         // of this shard, at the rates given
  std::string fingerprint;        // of the whole plan
  std::size_t plan_problems = 0;  // in the whole plan
};

// shard_text: "" (no shard), "I/N" or "auto"; shards: --shards N, 0 when not given. The cut is the built-in model's
// (tuner/shard_plan.hpp); `rates` only price the shard it selects.
ShardSelection select_shard(const SweepPlan& plan, const SweepProfile& profile, const std::string& shard_text,
                            int shards, const CostRates& rates = {});

// One line: "shard 2/8 (Slurm array task 2 of 8) of plan 1a2b..: 4125 of 33000 problems, estimated 35m10s".
std::string shard_summary(const ShardSelection& s);

// The estimated time of each of `count` shards of the plan at `rates`, the whole plan's on one GPU, and the wall
// time of the shards in parallel on `count` GPUs (the longest shard and its process's start).
void print_shard_estimates(const SweepPlan& plan, const SweepProfile& profile, int count, const CostRates& rates,
                           std::ostream& out);

// The rates `sweep --dry-run` prices a plan at: measured from the db at `db_path` when it exists and holds finished
// runs of this profile (tuner/sweep_cost.hpp), else the built-in ones, whose source then says why (no such run, or
// the db could not be read: a dry run needs no db); `db_path` "" for none.
CostRates dry_run_rates(const std::string& db_path, const SweepProfile& profile);

}  // namespace gemmtune::cli
