// How `sweep --devices` splits a sweep among one worker process per GPU (the processes themselves are started by
// the CLI, src/cli/sweep_devices.cpp): which GPUs a list names, how many shards a group of identical GPUs cuts the
// plan into, and what a worker's progress line says.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gemmtune {

// The devices `spec` ("all" or "0,2,3") names among `available` (CUDA indices), in the order given. Throws
// InputError for an unknown, repeated or malformed index.
std::vector<int> select_devices(const std::string& spec, const std::vector<int>& available);

// A group of `workers` identical GPUs sweeps a plan of `problems` problems, estimated at `estimated_s` seconds of one
// GPU, in this many shards: one for one GPU (nothing to balance), else up to 4 per GPU, taken one after another as
// GPUs come free, so that an estimate that was off costs at most a quarter of a worker's share. Each shard is a
// process that starts a CUDA context, cuBLASLt and CUPTI (about a second), so a GPU's share is cut only into shards
// of at least kMinShardSeconds; never more shards than problems.
inline constexpr double kMinShardSeconds = 30;
int shards_for_group(int workers, std::size_t problems, double estimated_s);

// A worker's per-problem line, "[3/12] KEY: 9 candidates, best ID 12.34 us | elapsed 00:04, ETA 00:12" or
// "[3/12] KEY: already measured, skipped (--resume)", without its counter and its own clock; nullopt for any other
// line (warnings, errors), which the coordinator passes on as they are.
struct WorkerProgress {
  std::string text;
  bool resumed = false;
};
std::optional<WorkerProgress> parse_worker_progress(const std::string& line);

}  // namespace gemmtune
