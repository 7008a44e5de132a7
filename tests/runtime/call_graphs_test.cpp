#include "runtime/call_graphs.hpp"

#include <cstdint>
#include <unordered_set>
#include <vector>

#include <gtest/gtest.h>

namespace gemmtune::runtime {
namespace {

// Addresses are never dereferenced here: an ExactCall only compares them.
template <class T>
T* at(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

ExactCall base() {
  ExactCall c;
  c.x.A = at<const float>(0x7f0000001000);
  c.x.B = at<const float>(0x7f0000002000);
  c.x.bias = at<const float>(0x7f0000003000);
  c.x.Y = at<float>(0x7f0000004000);
  c.x.Z = at<float>(0x7f0000005000);
  c.x.seed = 11;
  c.x.offset = 12;
  c.x.offset_ptr = nullptr;
  c.stream = at<CUstream_st>(0x55);
  c.scratch = at<const void>(0x66);
  return c;
}

TEST(ExactCall, TheSamePointersValuesStreamAndScratchAreOneCall) {
  const ExactCall a = base(), b = base();
  EXPECT_EQ(a, b);
  EXPECT_EQ(ExactCallHash{}(a), ExactCallHash{}(b));
}

// A replay runs what its capture launched, so a call differing in anything a launch reads is another call.
TEST(ExactCall, AnyPointerDropoutValueStreamOrScratchMakesAnotherCall) {
  std::vector<ExactCall> v(11, base());
  v[1].x.A = at<const float>(0x7f0000001010);
  v[2].x.B = at<const float>(0x7f0000002010);
  v[3].x.bias = nullptr;
  v[4].x.Y = at<float>(0x7f0000004010);
  v[5].x.Z = nullptr;
  v[6].x.seed = 13;
  v[7].x.offset = 13;
  v[8].x.offset_ptr = at<const std::uint64_t>(0x7f0000006000);
  v[9].stream = at<CUstream_st>(0x56);
  v[10].scratch = at<const void>(0x67);
  std::unordered_set<ExactCall, ExactCallHash> calls(v.begin(), v.end());
  EXPECT_EQ(calls.size(), v.size());
  for (std::size_t i = 1; i < v.size(); ++i) EXPECT_FALSE(v[i] == v[0]) << i;
}

// `gemmtune apply` asks instead of running a call it may hand to the library: the asking is its first sight.
TEST(CallGraphs, AskingAboutACallRemembersItsFirstSightAndItsRepeatReplays) {
  CallGraphs graphs;
  const ExactCall a = base();
  ExactCall b = base();
  b.x.Y = at<float>(0x7f0000009000);
  EXPECT_FALSE(graphs.repeats(a)) << "a first sight";
  EXPECT_TRUE(graphs.repeats(a)) << "its repeat";
  EXPECT_FALSE(graphs.repeats(b)) << "another Y is another call";
  EXPECT_TRUE(graphs.repeats(a));
  EXPECT_EQ(graphs.graphs(), 0u);
  EXPECT_EQ(graphs.replays(), 0u);
}

// Replaying costs the GPU 0.13-0.46 us more than launching for another one- or two-node graph than the last
// (results/nvidia-h200/launch_host_probe.txt); the same graph again, or a three-node one (+epi, +pad), costs it no
// more, unless the plan's launches overlap each other (results/nvidia-h200/programmatic_launch.txt).
TEST(ReplayPolicy, AnotherOneOrTwoNodeGraphThanTheLastOrAnyOfAPlanWhoseLaunchesOverlapMayCostTheGpuMore) {
  EXPECT_TRUE(replay_may_cost_more(1, false, false));
  EXPECT_TRUE(replay_may_cost_more(2, false, false));
  EXPECT_FALSE(replay_may_cost_more(3, false, false));
  EXPECT_FALSE(replay_may_cost_more(1, true, false));
  EXPECT_FALSE(replay_may_cost_more(2, true, false));
  EXPECT_TRUE(replay_may_cost_more(1, true, true)) << "the same call again, where launches overlap";
  EXPECT_TRUE(replay_may_cost_more(3, true, true));
  EXPECT_TRUE(replay_may_cost_more(3, false, true));
}

// A staged variant's GEMM starts behind its own copy (one programmatic edge a call), which a replay keeps; only an
// edge between the two calls, one more than twice a call's own, is an overlap a replay loses.
TEST(ReplayPolicy, OnlyAProgrammaticEdgeBetweenTwoCallsMeansTheirLaunchesOverlap) {
  EXPECT_FALSE(launches_overlap(0, 0));
  EXPECT_TRUE(launches_overlap(0, 1)) << "a one-kernel call launched behind the call before";
  EXPECT_FALSE(launches_overlap(1, 2)) << "each call's GEMM behind its own copy (H200: 2 of 3 edges)";
  EXPECT_TRUE(launches_overlap(1, 3)) << "and behind the call before too";
}

// A replay's GPU sample exceeds the GPU's own time by at most the replay's host time (its first event may run before
// the graph is enqueued), so a launch hides under the GPU only where it takes less than the sample less that.
TEST(ReplayPolicy, ALaunchHidesUnderTheGpuOnlyWhereItTakesLessHostTimeThanTheReplaysLeastGpuTime) {
  CallCosts c;
  EXPECT_FALSE(launch_hides_under_gpu(c)) << "nothing measured";
  c.launch_host_us = 6.0;
  EXPECT_FALSE(launch_hides_under_gpu(c)) << "no replay measured";
  c.replay_host_us = 1.3;
  EXPECT_FALSE(launch_hides_under_gpu(c)) << "no replay sampled on the GPU";
  c.replay_gpu_us = 12.0;
  EXPECT_TRUE(launch_hides_under_gpu(c));
  c.replay_gpu_us = 7.0;
  EXPECT_FALSE(launch_hides_under_gpu(c)) << "7.0 us less the replay's 1.3 us of host time is under the launch's 6.0";
  c.replay_gpu_us = 12.0;
  c.launch_host_us = CallCosts::kUnmeasured;
  EXPECT_FALSE(launch_hides_under_gpu(c)) << "no launch measured";
}

// replay_overlap_ab.txt: cuBLASLt's split-k algos lose replayed at m = 1 and only there; every other call replays.
TEST(ReplayPolicy, OnlyASingleRowCallOnACublasLtSplitKAlgoIsLaunchedEveryTime) {
  GemmProblem gemm;
  gemm.m = 1;
  gemm.n = 1024;
  gemm.k = 13824;
  Candidate split;
  split.backend = Backend::Lt;
  split.lt.splitk = 4;
  EXPECT_TRUE(launches_every_call(gemm, split));
  Candidate unsplit = split;
  unsplit.lt.splitk = 1;
  EXPECT_FALSE(launches_every_call(gemm, unsplit));
  Candidate own = split;
  own.backend = Backend::Own;
  EXPECT_FALSE(launches_every_call(gemm, own)) << "our split variants' splitk field is not cuBLASLt's";
  gemm.m = 2;
  EXPECT_FALSE(launches_every_call(gemm, split));
}

TEST(CallGraphs, APlanThatLaunchesEveryCallNeverCountsOneAsARepeat) {
  CallGraphs graphs(true);
  const ExactCall call = base();
  EXPECT_FALSE(graphs.repeats(call));
  EXPECT_FALSE(graphs.repeats(call)) << "a second sight replays only where the plan captures";
  EXPECT_EQ(graphs.graphs(), 0u);
}

}  // namespace
}  // namespace gemmtune::runtime
