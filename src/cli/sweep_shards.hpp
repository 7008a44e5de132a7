// `sweep --shard I/N | --shard auto [--shards N]`: which part of the plan this process sweeps, and what
// `--dry-run` says about the cut (each shard's problems and estimated time) so a user can choose N.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "profile/sweep_profile.hpp"
#include "tuner/plan.hpp"
#include "tuner/shard_spec.hpp"

namespace gemmtune::cli {

struct ShardSelection {
  std::optional<ShardSpec> spec;  // absent: the whole plan
  SweepPlan plan;                 // the shard's problems (the whole plan when no shard was asked for)
  double estimated_s = 0;         // of this shard
  std::string fingerprint;        // of the whole plan
  std::size_t plan_problems = 0;  // in the whole plan
};

// shard_text: "" (no shard), "I/N" or "auto"; shards: --shards N, 0 when not given.
ShardSelection select_shard(const SweepPlan& plan, const SweepProfile& profile, const std::string& shard_text,
                            int shards);

// One line: "shard 2/8 (Slurm array task 2 of 8) of plan 1a2b..: 4125 of 33000 problems, estimated 35m10s".
std::string shard_summary(const ShardSelection& s);

// The estimated time of each of `count` shards of the plan, and the whole plan's on one GPU.
void print_shard_estimates(const SweepPlan& plan, const SweepProfile& profile, int count, std::ostream& out);

}  // namespace gemmtune::cli
