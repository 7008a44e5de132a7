#include "tuner/shard_spec.hpp"

#include <cstdlib>

#include "common/error.hpp"

namespace gemmtune {
namespace {

constexpr const char* kNoScheduler =
    "--shard auto: no scheduler index found: run it as a Slurm array task (sbatch --array=0-N-1, which sets "
    "SLURM_ARRAY_TASK_ID) or in a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, with --shards N), or pass "
    "--shard I/N";

// Digits only, at most 9 of them (so it fits an int): a scheduler never writes a sign, a space or a hex number.
std::optional<int> parse_count(const std::string& text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  for (const char c : text)
    if (c < '0' || c > '9') return std::nullopt;
  return std::atoi(text.c_str());
}

int env_number(const EnvLookup& env, const std::string& name, const char* what) {
  const std::optional<std::string> value = env(name);
  if (!value) throw InputError(std::string("--shard auto: ") + what + " but " + name + " is not set");
  const std::optional<int> n = parse_count(*value);
  if (!n) throw InputError("--shard auto: " + name + "='" + *value + "' is not a non-negative integer");
  return *n;
}

ShardSpec from_slurm(const EnvLookup& env, int shards_option) {
  const char* in_array = "SLURM_ARRAY_TASK_ID is set (a Slurm array task)";
  const int id = env_number(env, "SLURM_ARRAY_TASK_ID", in_array);
  const int min = env_number(env, "SLURM_ARRAY_TASK_MIN", in_array);
  const int count = env_number(env, "SLURM_ARRAY_TASK_COUNT", in_array);
  if (count < 1) throw InputError("--shard auto: SLURM_ARRAY_TASK_COUNT is 0");
  if (id < min)
    throw InputError("--shard auto: SLURM_ARRAY_TASK_ID " + std::to_string(id) + " is below SLURM_ARRAY_TASK_MIN " +
                     std::to_string(min));
  // An array with a step (--array=0-15:2) or a list (--array=1,5,9) has ids that are not min..min+count-1.
  if (const std::optional<std::string> max_text = env("SLURM_ARRAY_TASK_MAX")) {
    const std::optional<int> max = parse_count(*max_text);
    if (!max) throw InputError("--shard auto: SLURM_ARRAY_TASK_MAX='" + *max_text + "' is not a non-negative integer");
    if (*max - min + 1 != count)
      throw InputError("--shard auto: the Slurm array's ids are not consecutive (" + std::to_string(count) +
                       " tasks from " + std::to_string(min) + " to " + *max_text +
                       "): submit it as --array=0-" + std::to_string(count - 1));
  }
  const int index = id - min;
  if (index >= count)
    throw InputError("--shard auto: Slurm array task " + std::to_string(id) + " is shard " + std::to_string(index) +
                     ", not below SLURM_ARRAY_TASK_COUNT " + std::to_string(count) +
                     " (the array's ids must be consecutive: --array=0-" + std::to_string(count - 1) + ")");
  if (shards_option != 0 && shards_option != count)
    throw InputError("--shard auto: --shards " + std::to_string(shards_option) + " disagrees with the Slurm array's " +
                     std::to_string(count) + " tasks");
  return {index, count, "Slurm array task " + std::to_string(index) + " of " + std::to_string(count)};
}

ShardSpec from_kubernetes(const EnvLookup& env, int shards_option) {
  const int index = env_number(env, "JOB_COMPLETION_INDEX", "a Kubernetes Indexed Job is");
  if (shards_option == 0)
    throw InputError("--shard auto: JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but --shards N is not: "
                     "pass the Job's completions as --shards");
  if (index >= shards_option)
    throw InputError("--shard auto: JOB_COMPLETION_INDEX " + std::to_string(index) + " is not below --shards " +
                     std::to_string(shards_option) + " (the Job's completions and --shards must agree)");
  return {index, shards_option,
          "Kubernetes completion index " + std::to_string(index) + " of " + std::to_string(shards_option)};
}

}  // namespace

ShardSpec parse_shard_spec(const std::string& text) {
  const std::size_t slash = text.find('/');
  const auto bad = [&](const std::string& why) { return InputError("--shard '" + text + "': " + why); };
  if (slash == std::string::npos) throw bad("expected I/N (e.g. 0/8) or auto");
  const std::optional<int> index = parse_count(text.substr(0, slash));
  const std::optional<int> count = parse_count(text.substr(slash + 1));
  if (!index || !count) throw bad("I and N must be non-negative integers (I/N, e.g. 0/8)");
  if (*count < 1) throw bad("N must be at least 1");
  if (*index >= *count) throw bad("I must be below N (shards are numbered 0 to N-1)");
  return {*index, *count, "--shard " + text};
}

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
}

ShardSpec shard_from_scheduler(const EnvLookup& env, int shards_option) {
  if (shards_option < 0) throw InputError("--shards must be at least 1");
  const bool slurm = env("SLURM_ARRAY_TASK_ID").has_value();
  const bool kubernetes = env("JOB_COMPLETION_INDEX").has_value();
  if (slurm && kubernetes)
    throw InputError("--shard auto: both SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX are set; pass --shard I/N");
  if (slurm) return from_slurm(env, shards_option);
  if (kubernetes) return from_kubernetes(env, shards_option);
  if (env("SLURM_JOB_ID"))
    throw InputError(std::string(kNoScheduler) + " (this Slurm job is not an array job)");
  throw InputError(kNoScheduler);
}

}  // namespace gemmtune
