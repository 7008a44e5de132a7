// Shards: a sweep's plan cut into N parts that separate processes (Slurm array tasks, Kubernetes Indexed Job pods,
// one worker per GPU) sweep on their own, with no coordinator among them. So the cut must be a pure function of
// the plan and N: every process computes the same one, every problem lands in exactly one shard, and the shards
// take about equally long. Balance comes from an estimated cost per problem (tuner/sweep_cost.hpp's built-in model,
// never one measured from a db, which differs between processes) and greedy LPT (longest first, each to the least
// loaded shard), with ties broken by plan position and shard number, never by anything that varies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profile/sweep_profile.hpp"
#include "tuner/plan.hpp"
#include "tuner/sweep_cost.hpp"  // estimated_cost_us: what the cut balances

namespace gemmtune {

struct Shard {
  std::vector<std::size_t> problems;  // positions in the plan, ascending (a shard sweeps in plan order)
  std::int64_t estimated_us = 0;
};

// Cuts the plan into `count` shards (count >= 1; shards beyond the plan's problem count stay empty).
std::vector<Shard> partition_plan(const SweepPlan& plan, const SweepProfile& profile, int count);

// The problems of one shard, as a plan of their own.
SweepPlan shard_plan(const SweepPlan& plan, const Shard& shard);

// A short fingerprint of the plan (its problem keys and own candidates, in order): two processes that print the
// same fingerprint for the same N cut the same shards.
std::string plan_fingerprint(const SweepPlan& plan);

// "1h05m", "12m30s", "45s": how estimates are printed.
std::string duration_text(double seconds);

}  // namespace gemmtune
