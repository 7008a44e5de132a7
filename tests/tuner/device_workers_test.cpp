// --devices: which GPUs a list names, how many shards a group of workers cuts the plan into, and which worker
// lines are progress.
#include "tuner/device_workers.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace gemmtune {
namespace {

TEST(DeviceWorkers, AllIsEveryGpuAndAListKeepsItsOrder) {
  EXPECT_EQ(select_devices("all", {0}), std::vector<int>{0});
  EXPECT_EQ(select_devices("all", {0, 1, 2, 3}), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(select_devices("3,0,2", {0, 1, 2, 3}), (std::vector<int>{3, 0, 2}));
}

TEST(DeviceWorkers, UnknownRepeatedOrMalformedDevicesAreRefused) {
  for (const char* bad : {"", "4", "0,0", "a", "0,,1x", "-1", "0;1", "1.0", "ALL", "0,"})
    EXPECT_THROW(select_devices(bad, {0, 1, 2, 3}), InputError) << "'" << bad << "'";
}

TEST(DeviceWorkers, OneGpuSweepsThePlanAsOneShardSeveralTakeUpToFourOfAtLeastThirtySecondsEach) {
  EXPECT_EQ(shards_for_group(1, 33000, 40000), 1);
  EXPECT_EQ(shards_for_group(8, 33000, 40000), 32);
  EXPECT_EQ(shards_for_group(8, 5, 40000), 5) << "never more shards than problems";
  EXPECT_EQ(shards_for_group(2, 108, 60), 2) << "a GPU's 30 s share is one shard: a second process would cost more";
  EXPECT_EQ(shards_for_group(2, 108, 150), 4) << "75 s each: two shards of at least 30 s per GPU";
}

TEST(DeviceWorkers, ProgressLinesAreToldFromOtherOutput) {
  const auto measured = parse_worker_progress(
      "[3/12] fwd:256x256x256:nn:row:none:tf32: 9 candidates, best own/x 12.34 us | elapsed 00:04, ETA 00:12");
  ASSERT_TRUE(measured);
  EXPECT_EQ(measured->text, "fwd:256x256x256:nn:row:none:tf32: 9 candidates, best own/x 12.34 us");
  EXPECT_FALSE(measured->resumed);
  const auto resumed = parse_worker_progress("[4/12] fwd:1x1x1:nn:row:none:fp32: already measured, skipped (--resume)");
  ASSERT_TRUE(resumed);
  EXPECT_TRUE(resumed->resumed);
  for (const char* other : {"gemmtune: warning: CUPTI unavailable", "", "[a/b] x", "[3/12]x", "[/12] x", "[3/] x",
                            "gemmtune: shard 1/4 (--shard 1/4) of plan abc: 10 of 40 problems"})
    EXPECT_FALSE(parse_worker_progress(other)) << "'" << other << "'";
}

}  // namespace
}  // namespace gemmtune
