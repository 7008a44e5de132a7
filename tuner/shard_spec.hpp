// Which shard this process sweeps: `--shard I/N`, or `--shard auto`, which asks the scheduler that started it.
// Slurm job arrays give SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_COUNT (I is the id minus
// the minimum, so --array=1-8 works too); Kubernetes Indexed Jobs give JOB_COMPLETION_INDEX, and N is the Job's
// completions, which the pod must be told with --shards N. Anything missing, malformed or out of range is an
// InputError (exit 2) that says which variable and what to do.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace gemmtune {

struct ShardSpec {
  int index = 0;  // 0 <= index < count
  int count = 1;
  std::string source;  // where it came from, for messages: "--shard 2/8", "Slurm array task 2 of 8"
};

// "I/N" with 0 <= I < N.
ShardSpec parse_shard_spec(const std::string& text);

// Reads one environment variable; nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvLookup process_environment();

// `--shard auto`: from the scheduler's variables. shards_option is --shards N, or 0 when it was not given.
ShardSpec shard_from_scheduler(const EnvLookup& env, int shards_option);

}  // namespace gemmtune
