// Which shard a process sweeps: --shard I/N, and --shard auto from Slurm job arrays and Kubernetes Indexed Jobs,
// with every malformed or missing value refused as bad input (exit 2) that names the variable.
#include <map>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "tuner/shard_spec.hpp"

namespace gemmtune {
namespace {

EnvLookup env_of(const std::map<std::string, std::string>& vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// The InputError's message, or "" when nothing was thrown.
std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ShardSpec, ParsesIndexOverCount) {
  const ShardSpec s = parse_shard_spec("3/8");
  EXPECT_EQ(s.index, 3);
  EXPECT_EQ(s.count, 8);
  EXPECT_EQ(parse_shard_spec("0/1").count, 1);
}

TEST(ShardSpec, RefusesMalformedOrOutOfRangeText) {
  for (const char* bad : {"", "3", "8/8", "9/8", "-1/8", "1/0", "a/8", "1/b", "1/8x", " 1/8", "1//8", "1/8/2",
                          "0x1/8", "99999999999/100000000000"})
    EXPECT_NE(refusal([&] { parse_shard_spec(bad); }), "") << "'" << bad << "' was accepted";
  EXPECT_NE(refusal([] { parse_shard_spec("8/8"); }).find("I must be below N"), std::string::npos);
}

TEST(ShardSpec, SlurmArrayTaskIsIdMinusMinOfCount) {
  ShardSpec s = shard_from_scheduler(
      env_of({{"SLURM_ARRAY_TASK_ID", "5"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_COUNT", "8"}}), 0);
  EXPECT_EQ(s.index, 5);
  EXPECT_EQ(s.count, 8);
  // --array=1-8: ids 1..8 are shards 0..7.
  s = shard_from_scheduler(env_of({{"SLURM_ARRAY_TASK_ID", "8"},
                                   {"SLURM_ARRAY_TASK_MIN", "1"},
                                   {"SLURM_ARRAY_TASK_MAX", "8"},
                                   {"SLURM_ARRAY_TASK_COUNT", "8"},
                                   {"SLURM_JOB_ID", "1234"}}),
                           8);
  EXPECT_EQ(s.index, 7);
  EXPECT_EQ(s.count, 8);
  EXPECT_NE(s.source.find("Slurm"), std::string::npos);
}

TEST(ShardSpec, SlurmRefusesBadMissingAndInconsistentValues) {
  const std::map<std::string, std::string> good = {
      {"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_COUNT", "4"}};
  const auto with = [&](const std::string& name, const std::string& value) {
    auto vars = good;
    vars[name] = value;
    return env_of(vars);
  };
  const auto without = [&](const std::string& name) {
    auto vars = good;
    vars.erase(name);
    return env_of(vars);
  };
  EXPECT_NE(refusal([&] { shard_from_scheduler(with("SLURM_ARRAY_TASK_ID", "two"), 0); })
                .find("SLURM_ARRAY_TASK_ID='two' is not a non-negative integer"),
            std::string::npos);
  EXPECT_NE(refusal([&] { shard_from_scheduler(with("SLURM_ARRAY_TASK_ID", "-1"), 0); }), "");
  EXPECT_NE(refusal([&] { shard_from_scheduler(with("SLURM_ARRAY_TASK_ID", ""), 0); }), "");
  EXPECT_NE(refusal([&] { shard_from_scheduler(with("SLURM_ARRAY_TASK_COUNT", "4 "), 0); }), "");
  EXPECT_NE(refusal([&] { shard_from_scheduler(with("SLURM_ARRAY_TASK_COUNT", "0"), 0); }), "");
  EXPECT_NE(refusal([&] { shard_from_scheduler(without("SLURM_ARRAY_TASK_COUNT"), 0); })
                .find("SLURM_ARRAY_TASK_COUNT is not set"),
            std::string::npos);
  EXPECT_NE(refusal([&] { shard_from_scheduler(without("SLURM_ARRAY_TASK_MIN"), 0); }), "");
  // Out of range: id 4 of a 4-task array starting at 0.
  EXPECT_NE(refusal([&] { shard_from_scheduler(with("SLURM_ARRAY_TASK_ID", "4"), 0); }).find("not below"),
            std::string::npos);
  EXPECT_NE(refusal([&] { shard_from_scheduler(with("SLURM_ARRAY_TASK_MIN", "3"), 0); }).find("below"),
            std::string::npos);
  // --array=0-6:2 has 4 tasks with ids 0, 2, 4, 6.
  auto stepped = good;
  stepped["SLURM_ARRAY_TASK_MAX"] = "6";
  EXPECT_NE(refusal([&] { shard_from_scheduler(env_of(stepped), 0); }).find("not consecutive"), std::string::npos);
  EXPECT_NE(refusal([&] { shard_from_scheduler(env_of(good), 5); }).find("disagrees"), std::string::npos);
}

TEST(ShardSpec, KubernetesIndexedJobTakesCountFromShardsOption) {
  const ShardSpec s = shard_from_scheduler(env_of({{"JOB_COMPLETION_INDEX", "15"}}), 16);
  EXPECT_EQ(s.index, 15);
  EXPECT_EQ(s.count, 16);
  EXPECT_NE(s.source.find("Kubernetes"), std::string::npos);
}

TEST(ShardSpec, KubernetesRefusesMissingShardsBadIndexAndOutOfRange) {
  EXPECT_NE(refusal([] { shard_from_scheduler(env_of({{"JOB_COMPLETION_INDEX", "1"}}), 0); }).find("--shards"),
            std::string::npos);
  EXPECT_NE(refusal([] { shard_from_scheduler(env_of({{"JOB_COMPLETION_INDEX", "16"}}), 16); }).find("not below"),
            std::string::npos);
  EXPECT_NE(refusal([] { shard_from_scheduler(env_of({{"JOB_COMPLETION_INDEX", "1.5"}}), 16); })
                .find("JOB_COMPLETION_INDEX='1.5'"),
            std::string::npos);
  EXPECT_NE(refusal([] { shard_from_scheduler(env_of({{"JOB_COMPLETION_INDEX", ""}}), 16); }), "");
}

TEST(ShardSpec, NoSchedulerOrBothAreRefused) {
  EXPECT_NE(refusal([] { shard_from_scheduler(env_of({}), 0); }).find("no scheduler index found"), std::string::npos);
  EXPECT_NE(refusal([] { shard_from_scheduler(env_of({{"SLURM_JOB_ID", "77"}}), 0); }).find("not an array job"),
            std::string::npos);
  EXPECT_NE(refusal([] {
              shard_from_scheduler(env_of({{"JOB_COMPLETION_INDEX", "0"},
                                           {"SLURM_ARRAY_TASK_ID", "0"},
                                           {"SLURM_ARRAY_TASK_MIN", "0"},
                                           {"SLURM_ARRAY_TASK_COUNT", "2"}}),
                                   2);
            }).find("both"),
            std::string::npos);
}

}  // namespace
}  // namespace gemmtune
