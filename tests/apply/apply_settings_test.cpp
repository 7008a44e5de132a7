// The environment `gemmtune apply` hands its program (apply/apply_settings.hpp): what the shim reads back is what the
// CLI wrote, and only "1" turns a flag on.
#include "apply/apply_settings.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace gemmtune::apply {
namespace {

ApplySettings read_from(const std::map<std::string, std::string>& env) {
  return read_apply_settings([&env](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(ApplySettings, WhatTheCliWritesIsWhatTheShimReads) {
  ApplySettings s;
  s.on = true;
  s.db = "/tmp/x.db";
  s.options.fp32_equivalent = true;
  s.options.host_yield = false;
  s.record = true;
  s.report_dir = "/tmp/parts";
  s.memory_mib = 512;
  std::map<std::string, std::string> env;
  for (const std::string& entry : apply_environment(s)) {
    const std::size_t eq = entry.find('=');
    ASSERT_NE(eq, std::string::npos) << entry;
    env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  const ApplySettings back = read_from(env);
  EXPECT_TRUE(back.on);
  EXPECT_EQ(back.db, "/tmp/x.db");
  EXPECT_TRUE(back.options.fp32_equivalent);
  EXPECT_FALSE(back.options.host_yield);
  EXPECT_TRUE(back.record);
  EXPECT_EQ(back.report_dir, "/tmp/parts");
  EXPECT_EQ(back.memory_mib, 512u);
  EXPECT_TRUE(back.error.empty()) << back.error;
}

TEST(ApplySettings, AMemoryBudgetThatIsNotAWholeNumberOfMibIsAnErrorNotNoBudget) {
  EXPECT_EQ(read_from({{kApplyEnv, "1"}}).memory_mib, 0u);
  EXPECT_EQ(read_from({{kApplyEnv, "1"}, {kMemoryEnv, "0"}}).memory_mib, 0u);
  for (const char* bad : {"-1", "1.5", "512M", " 512", "1234567890"}) {
    const ApplySettings s = read_from({{kApplyEnv, "1"}, {kMemoryEnv, bad}});
    EXPECT_NE(s.error.find(kMemoryEnv), std::string::npos) << bad;
    EXPECT_EQ(s.memory_mib, 0u) << bad;
  }
  EXPECT_EQ(parse_memory_mib("999999999"), 999999999u);
}

TEST(ApplySettings, AFlagIsOnOnlyAsOne) {
  EXPECT_FALSE(read_from({}).on);
  EXPECT_FALSE(read_from({{kApplyEnv, "0"}}).on);
  EXPECT_FALSE(read_from({{kApplyEnv, "true"}}).on);
  EXPECT_FALSE(read_from({{kApplyEnv, ""}}).on);
  EXPECT_TRUE(read_from({{kApplyEnv, "1"}}).on);
  EXPECT_FALSE(read_from({{kApplyEnv, "1"}, {kFp32EquivalentEnv, "yes"}}).options.fp32_equivalent);
  EXPECT_FALSE(read_from({{kApplyEnv, "1"}, {kRecordEnv, "0"}}).record);
  EXPECT_TRUE(read_from({{kApplyEnv, "1"}}).options.host_yield);
  EXPECT_TRUE(read_from({{kApplyEnv, "1"}, {kNoHostYieldEnv, "0"}}).options.host_yield);
  EXPECT_FALSE(read_from({{kApplyEnv, "1"}, {kNoHostYieldEnv, "1"}}).options.host_yield);
}

}  // namespace
}  // namespace gemmtune::apply
