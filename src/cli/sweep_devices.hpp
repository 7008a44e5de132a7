// `sweep --devices all|0,2,3`: one worker process per GPU, each `gemmtune sweep --device D --shard I/K` (its own
// CUDA context, cuBLASLt handle and CUPTI subscriber), all writing one db.
//
// Why one db and not per-worker dbs merged at the end: the db is built for several writers (WAL, a 10 s busy
// timeout, one BEGIN IMMEDIATE transaction per problem), and a problem's transaction takes milliseconds against
// the ~0.5 s it takes to measure, so W workers hold the write lock a few percent of the time. One file keeps
// `--resume` exactly as on one GPU, shows results while the sweep runs and needs no merge or clean-up.
// (Shards on several hosts cannot share a WAL file over a network filesystem: there each shard writes its own db
// and `cache merge` joins them.)
//
// GPUs are grouped by device key: each group sweeps the whole plan, so GPUs of different models each get a
// complete cache under their own key, and identical GPUs share the work (tuner/device_workers.hpp says how).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "profile/sweep_profile.hpp"
#include "tuner/plan.hpp"

namespace gemmtune::cli {

struct DeviceSweep {
  std::string devices;                    // "all" or "0,2,3"
  std::vector<std::string> worker_args;   // sweep options every worker gets (profile, db, modes, resume, ...)
  std::string json, csv;                  // the combined outputs (one device key only)
  std::function<void()> prepare_outputs;  // creates the output directories once the GPUs are known
};

// Runs the workers to the end, prints the combined table and writes the combined --json/--csv. Throws an Error
// whose exit code is the worst of the workers' (0 < 1 < 2 < 3 < killed by a signal).
void sweep_on_devices(const SweepPlan& plan, const SweepProfile& profile, const DeviceSweep& request);

}  // namespace gemmtune::cli
