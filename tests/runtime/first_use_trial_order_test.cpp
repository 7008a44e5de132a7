// The first-use trial's steps in order, on a fake GPU: nothing that can wait for the GPU is ever queued behind the
// blocking kernel (issue 37: three first calls waited out its 10 s timeout), a batch whose blocking kernel timed out
// anyway is discarded, a challenger that can no longer win stops, and the GPU time of one problem is bounded.
#include "runtime/first_use_trial.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace gemmtune::runtime {
namespace {

enum Kind { kWarm, kCold, kGraph, kGraphCold };

// Times each side per call by condition, and checks every step against the rules of the blocking kernel
// (launch/blocking_kernel.hpp) as it is taken. L2 is modelled: a call on set 0 is warm only where the call before it
// read set 0 too (any other set evicts it); a replay of the warm graph is the graph's time on warm inputs, cold ones'
// otherwise; a replay of the cold graph is its cold time unless its sets are still in L2 from the replay before (an
// eviction clears them), then the warm graph's. Only calls between start_timer and stop_timer count into a batch's
// time.
class FakeTrialGpu final : public TrialGpu {
 public:
  // us[side] = {warm, cold, graph warm, graph cold} per-call microseconds.
  explicit FakeTrialGpu(std::vector<std::array<double, 4>> us) : us_(std::move(us)) {}

  int sides() const override { return static_cast<int>(us_.size()); }

  void launch(int side, int set) override {
    log("launch " + std::to_string(side));
    if (blocked_ && batches_ + 1 == fail_launch_in_batch_) throw CheckError("a launch failed");
    const Kind kind = set == 0 && set0_in_l2_ ? kWarm : kCold;
    set0_in_l2_ = set == 0;
    if (blocked_) {
      if (!loaded_.count(side))
        violation("first launch of side " + std::to_string(side) + " behind the blocking kernel");
      (timing_ ? batch_ : untimed_).push_back({side, kind});
      cold_batch_ = cold_batch_ || (timing_ && set != 0);
    } else {
      launched_unwaited_.insert(side);
    }
  }
  void wait() override {
    log("wait");
    if (blocked_) violation("a wait behind the blocking kernel");
    if (!launched_unwaited_.empty() && batches_ == 0) loading_us_ = module_load_us_;  // the warm-up's first launches
    loaded_.insert(launched_unwaited_.begin(), launched_unwaited_.end());
    launched_unwaited_.clear();
    replayed_.insert(replayed_unwaited_.begin(), replayed_unwaited_.end());
    replayed_unwaited_.clear();
    eviction_loaded_ = eviction_loaded_ || eviction_unwaited_;
  }
  void capture_graph(int side, int calls, bool cold) override {
    log("capture " + std::to_string(side));
    if (blocked_) violation("a graph captured (an allocation) behind the blocking kernel");
    if (!loaded_.count(side)) violation("a graph of side " + std::to_string(side) + " captured before it was loaded");
    graph_calls_[{side, cold}] = calls;
  }
  void replay_graph(int side, bool cold) override {
    log("replay " + std::to_string(side) + (cold ? " cold" : ""));
    if (!graph_calls_.count({side, cold})) violation("a replay of a graph never captured");
    if (!blocked_) {
      replayed_unwaited_.insert({side, cold});
      return;
    }
    if (!replayed_.count({side, cold}))
      violation("the first replay (upload) of side " + std::to_string(side) + "'s graph behind the blocking kernel");
    for (int i = 0; i < graph_calls_[{side, cold}]; ++i) {  // a cold graph's calls each read a set of their own
      const Kind kind = cold ? (cold_sets_in_l2_ ? kGraph : kGraphCold) : set0_in_l2_ ? kGraph : kCold;
      if (timing_) batch_.push_back({side, kind});
      set0_in_l2_ = !cold;
    }
    cold_batch_ = cold_batch_ || (timing_ && cold);
    cold_sets_in_l2_ = cold_sets_in_l2_ || cold;
  }
  void evict_l2() override {
    log("evict");
    if (blocked_ && !eviction_loaded_) violation("the first eviction behind the blocking kernel");
    if (timing_) violation("an eviction inside a timed batch");
    if (!blocked_) eviction_unwaited_ = true;
    evicted_in_batch_ = evicted_in_batch_ || blocked_;
    set0_in_l2_ = cold_sets_in_l2_ = false;
  }
  void block() override {
    log("block");
    if (blocked_) violation("blocked twice");
    blocked_ = true;
    evicted_in_batch_ = cold_batch_ = false;
    batch_.clear();
    untimed_.clear();
    timing_ = false;
  }
  void start_timer() override {
    if (!blocked_) violation("a timer started outside a blocked batch");
    timing_ = true;
  }
  void stop_timer() override { timing_ = false; }
  bool release_and_wait() override {
    log("release");
    if (!blocked_) violation("released without a block");
    blocked_ = false;
    ++batches_;
    if (cold_batch_) ++cold_batches_;
    if (cold_batch_ && evicted_in_batch_) ++overwritten_cold_batches_;
    if (!cold_batch_ && evicted_in_batch_) violation("a warm batch behind an eviction");
    batch_us_ = 0;
    for (const auto& [side, kind] : batch_) batch_us_ += us_[static_cast<std::size_t>(side)][kind];
    queued_us_ += batch_us_;
    for (const auto& [side, kind] : untimed_) queued_us_ += us_[static_cast<std::size_t>(side)][kind];
    per_side_batches_[batch_.empty() ? -1 : batch_.front().first]++;
    timed_calls_.push_back(static_cast<int>(batch_.size()));
    const bool timed_out = time_out_batches_.count(batches_) > 0;
    if (timed_out) batch_us_ = 1e9;  // a timed-out batch's time is wrong: it must never reach a result
    return !timed_out;
  }
  double timed_us() const override { return batch_us_; }
  // The GPU's time so far and host_us_per_batch_ a batch.
  double elapsed_us() const override { return loading_us_ + queued_us_ + batches_ * host_us_per_batch_; }

  bool blocked() const { return blocked_; }

  std::set<int> time_out_batches_;  // 1-based batch numbers whose blocking kernel times out
  int fail_launch_in_batch_ = 0;    // 1-based batch number whose launches throw
  std::vector<std::string> violations_;
  std::vector<std::string> steps_;
  std::map<int, int> per_side_batches_;
  std::vector<int> timed_calls_;  // per batch, in order
  int batches_ = 0;
  int cold_batches_ = 0, overwritten_cold_batches_ = 0;  // timed batches of cold calls; of them, evicted first
  double queued_us_ = 0;  // GPU time of every call queued behind the blocking kernel, timed or not
  double host_us_per_batch_ = 0;
  double module_load_us_ = 0;  // host time the first launches take, waited for before the first batch

 private:
  void log(const std::string& s) { steps_.push_back(s); }
  void violation(const std::string& what) {
    violations_.push_back(what + " (step " + std::to_string(steps_.size()) + ")");
  }

  std::vector<std::array<double, 4>> us_;
  bool blocked_ = false, timing_ = false;
  std::set<int> loaded_, launched_unwaited_;
  std::set<std::pair<int, bool>> replayed_, replayed_unwaited_;  // (side, cold graph)
  std::map<std::pair<int, bool>, int> graph_calls_;
  bool eviction_loaded_ = false, eviction_unwaited_ = false;
  bool cold_sets_in_l2_ = false;
  bool evicted_in_batch_ = false, cold_batch_ = false;
  double loading_us_ = 0;
  std::vector<std::pair<int, Kind>> batch_, untimed_;
  bool set0_in_l2_ = false;
  double batch_us_ = 0;
};

constexpr double kFloor = 1.01;

// kFloor, against every pair, for each of gpu's challengers.
std::vector<ChallengerRule> floors(const TrialGpu& gpu) {
  return std::vector<ChallengerRule>(static_cast<std::size_t>(gpu.sides() - 1), ChallengerRule{kFloor, false});
}

TEST(FirstUseTrialOrder, NothingIsLoadedCapturedOrWaitedForBehindTheBlockingKernel) {
  // heuristic-first, a challenger that wins everywhere, and one that wins cold only.
  FakeTrialGpu gpu({{10, 12, 9, 12}, {8, 9, 7, 9}, {11, 10, 9.5, 10}});
  const FirstUseTrial t = run_first_use_trial(gpu, floors(gpu));
  EXPECT_TRUE(gpu.violations_.empty()) << ::testing::PrintToString(gpu.violations_);
  // Every side launched, then one wait, before the first block.
  const auto first_block = std::find(gpu.steps_.begin(), gpu.steps_.end(), "block");
  ASSERT_NE(first_block, gpu.steps_.end());
  const std::vector<std::string> before(gpu.steps_.begin(), first_block);
  for (const char* side : {"launch 0", "launch 1", "launch 2"})
    EXPECT_NE(std::find(before.begin(), before.end(), side), before.end()) << side;
  EXPECT_EQ(before.back(), "wait");
  ASSERT_EQ(t.challengers.size(), 2u);
  EXPECT_EQ(t.discarded_batches, 0);
  EXPECT_TRUE(t.challengers[0].stopped.empty()) << t.challengers[0].stopped;
  const DefaultFastest fastest = fastest_default({t.challengers[0].times, t.challengers[1].times});
  EXPECT_TRUE(t.challengers[0].times.challenger_wins(fastest));
  EXPECT_FALSE(t.challengers[1].times.challenger_wins(fastest));
}

TEST(FirstUseTrialOrder, AChallengerThatCanNoLongerWinStopsAfterItsFirstPairOfBatches) {
  FakeTrialGpu gpu({{10, 12, 9, 12}, {20, 24, 18, 24}, {8, 9, 7, 9}});
  const FirstUseTrial t = run_first_use_trial(gpu, floors(gpu));
  EXPECT_TRUE(gpu.violations_.empty()) << ::testing::PrintToString(gpu.violations_);
  const ChallengerTrial& slow = t.challengers[0];
  EXPECT_EQ(slow.times.cold.batches, 1);
  EXPECT_EQ(slow.times.warm.batches, 0);
  EXPECT_EQ(slow.times.graph.batches, 0);
  EXPECT_NE(slow.stopped.find("no faster than heuristic-first's fastest batch in stream cold"), std::string::npos)
      << slow.stopped;
  EXPECT_FALSE(slow.out_of_budget) << "it lost";
  EXPECT_EQ(gpu.per_side_batches_[1], 1);
  const ChallengerTrial& fast = t.challengers[1];
  EXPECT_TRUE(fast.stopped.empty());
  EXPECT_GE(fast.times.warm.batches, 3);
  EXPECT_EQ(fast.times.warm.batches, fast.times.cold.batches);
  EXPECT_EQ(fast.times.warm.batches, fast.times.graph.batches);
  EXPECT_DOUBLE_EQ(fast.times.cold.challenger_us, 9);
  EXPECT_DOUBLE_EQ(fast.times.cold.default_fastest_us, 12);
}

TEST(FirstUseTrialOrder, AChallengerThatLosesOnlyFromAGraphStopsThereAndDoesNotWin) {
  FakeTrialGpu gpu({{10, 12, 9, 12}, {8, 9, 9.5, 9}});
  const FirstUseTrial t = run_first_use_trial(gpu, floors(gpu));
  const ChallengerTrial& c = t.challengers[0];
  EXPECT_EQ(c.times.graph.batches, 1);
  EXPECT_NE(c.stopped.find("graph warm"), std::string::npos) << c.stopped;
  EXPECT_FALSE(c.times.challenger_wins(fastest_default({c.times})));
}

TEST(FirstUseTrialOrder, AChallengerThatLosesOnlyFromAColdGraphStopsThereAndDoesNotWin) {
  FakeTrialGpu gpu({{10, 12, 9, 12}, {8, 9, 7, 12.5}});
  const FirstUseTrial t = run_first_use_trial(gpu, floors(gpu));
  EXPECT_TRUE(gpu.violations_.empty()) << ::testing::PrintToString(gpu.violations_);
  const ChallengerTrial& c = t.challengers[0];
  EXPECT_GE(c.times.graph.batches, 3);
  EXPECT_EQ(c.times.graph_cold.batches, 1);
  EXPECT_NE(c.stopped.find("graph cold"), std::string::npos) << c.stopped;
  EXPECT_FALSE(c.times.challenger_wins(fastest_default({c.times})));
}

TEST(FirstUseTrialOrder, EveryColdGraphBatchStartsWithItsInputsEvictedNotLeftInL2ByTheBatchBefore) {
  // From a cold graph the challenger (10 us) beats heuristic-first cold (12) but not warm (9): heuristic-first's
  // batches, which follow the challenger's in every other pair, must not find the graph's inputs in L2.
  FakeTrialGpu gpu({{10, 12, 9, 12}, {8, 9, 7, 10}});
  const FirstUseTrial t = run_first_use_trial(gpu, floors(gpu));
  EXPECT_TRUE(gpu.violations_.empty()) << ::testing::PrintToString(gpu.violations_);
  const ProgramTrial& c = t.challengers[0].times;
  EXPECT_TRUE(t.challengers[0].stopped.empty()) << t.challengers[0].stopped;
  EXPECT_GE(c.graph_cold.batches, 3);
  EXPECT_DOUBLE_EQ(c.graph_cold.challenger_slowest_us, 10);
  EXPECT_DOUBLE_EQ(c.graph_cold.default_fastest_us, 12);
  EXPECT_TRUE(c.challenger_wins(fastest_default({c})));
}

// A program's call follows kernels that wrote their outputs, so its L2 is full of dirty lines; the held-out benchmark
// and PyTorch's side of it overwrite L2 before every cold batch, stream and graph alike. The trial's cold batches must
// start so too, or it misjudges kernels whose misses pay for those lines' write-back (cuBLAS's GEMV at 1x8192x8192).
TEST(FirstUseTrialOrder, EveryColdBatchStreamOrGraphStartsOnAnL2OverwrittenBehindTheBlockingKernel) {
  FakeTrialGpu gpu({{10, 12, 9, 12}, {8, 9, 7, 10}});
  run_first_use_trial(gpu, floors(gpu));
  EXPECT_TRUE(gpu.violations_.empty()) << ::testing::PrintToString(gpu.violations_);
  EXPECT_GT(gpu.cold_batches_, 6) << "stream cold and graph cold batches of both sides";
  EXPECT_EQ(gpu.overwritten_cold_batches_, gpu.cold_batches_);
}

TEST(FirstUseTrialOrder, ABatchWhoseBlockingKernelTimedOutIsDiscardedAndTimedAgain) {
  FakeTrialGpu gpu({{10, 12, 9, 12}, {8, 9, 7, 9}});
  gpu.time_out_batches_ = {4};
  const FirstUseTrial t = run_first_use_trial(gpu, floors(gpu));
  EXPECT_TRUE(gpu.violations_.empty()) << ::testing::PrintToString(gpu.violations_);
  EXPECT_EQ(t.discarded_batches, 1);
  const ProgramTrial& c = t.challengers[0].times;
  for (const TrialResult* r : {&c.warm, &c.cold, &c.graph, &c.graph_cold}) {
    EXPECT_LT(r->challenger_slowest_us, 100);
    EXPECT_LT(r->default_us, 100);
  }
  EXPECT_TRUE(c.challenger_wins(fastest_default({c})));
}

TEST(FirstUseTrialOrder, ABlockingKernelThatTimesOutAgainFailsTheTrial) {
  FakeTrialGpu gpu({{10, 12, 9, 12}, {8, 9, 7, 9}});
  gpu.time_out_batches_ = {2, 5};
  EXPECT_THROW(run_first_use_trial(gpu, floors(gpu)), CheckError);
}

TEST(FirstUseTrialOrder, ALaunchThatFailsBehindTheBlockingKernelReleasesItBeforeTheErrorGoesOn) {
  FakeTrialGpu gpu({{10, 12, 9, 12}, {8, 9, 7, 9}});
  gpu.fail_launch_in_batch_ = 3;
  EXPECT_THROW(run_first_use_trial(gpu, floors(gpu)), CheckError);
  EXPECT_FALSE(gpu.blocked());
  EXPECT_EQ(gpu.steps_.back(), "release");
}

TEST(FirstUseTrialOrder, OneProblemsBatchesStopAtTheBudgetUntimedCallsIncludedAndTheLaterChallengersDoNotWin) {
  // Calls of 1 ms: one call a batch, so each pair costs 2 ms; 20 challengers that would all win.
  std::vector<std::array<double, 4>> us = {{1000, 1000, 1000, 1000}};
  for (int i = 0; i < 20; ++i) us.push_back({900, 900, 900, 900});
  FakeTrialGpu gpu(us);
  const FirstUseTrial t = run_first_use_trial(gpu, floors(gpu));
  EXPECT_LE(t.gpu_us, kTrialBudgetUs + 2000);
  // The untimed call that reloads a warm batch's inputs costs as much as the timed one here: the budget counts it.
  EXPECT_LE(gpu.queued_us_, kTrialBudgetUs + 4000);
  EXPECT_TRUE(t.challengers.front().stopped.empty()) << t.challengers.front().stopped;
  const ChallengerTrial& last = t.challengers.back();
  EXPECT_NE(last.stopped.find("not timed in full"), std::string::npos) << last.stopped;
  std::vector<ProgramTrial> all;
  for (const ChallengerTrial& c : t.challengers) all.push_back(c.times);
  EXPECT_FALSE(last.times.challenger_wins(fastest_default(all)));
  EXPECT_TRUE(t.challengers.front().times.challenger_wins(fastest_default(all)));
}

// Calls of 1 ms, one a batch: the budget finishes one challenger after the first pairs. The fourth is the fastest.
std::vector<std::array<double, 4>> one_ms_calls() {
  return {{1000, 1000, 1000, 1000}, {960, 960, 960, 960}, {960, 960, 960, 960},
          {960, 960, 960, 960},     {900, 900, 900, 900}, {960, 960, 960, 960}};
}

TEST(FirstUseTrialOrder, AfterTheFirstPairsTheChallengerFastestInItsFirstColdBatchIsTimedInFullFirst) {
  FakeTrialGpu gpu(one_ms_calls());
  const FirstUseTrial t = run_first_use_trial(gpu, floors(gpu));
  EXPECT_TRUE(gpu.violations_.empty()) << ::testing::PrintToString(gpu.violations_);
  EXPECT_TRUE(t.challengers[3].stopped.empty()) << t.challengers[3].stopped;
  EXPECT_NE(t.challengers[0].stopped.find("not timed in full"), std::string::npos) << t.challengers[0].stopped;
  std::vector<ProgramTrial> all;
  for (const ChallengerTrial& c : t.challengers) all.push_back(c.times);
  EXPECT_TRUE(t.challengers[3].times.challenger_wins(fastest_default(all)));
  EXPECT_FALSE(t.challengers[0].times.challenger_wins(fastest_default(all)));
}

TEST(FirstUseTrialOrder, NoPairIsQueuedPastTheHostBudgetAndTheFastestChallengerStillFinishes) {
  // Calls of 1 ms, one a batch, and 0.5 ms of host time a batch beyond its GPU time: the host budget binds before the
  // GPU's 50 ms, after three first pairs. The third challenger is the fastest.
  std::vector<std::array<double, 4>> us = {{1000, 1000, 1000, 1000}};
  for (int i = 0; i < 8; ++i) us.push_back({960, 960, 960, 960});
  us[3] = {900, 900, 900, 900};
  FakeTrialGpu gpu(us);
  gpu.host_us_per_batch_ = 500;
  const FirstUseTrial t = run_first_use_trial(gpu, floors(gpu));
  EXPECT_TRUE(gpu.violations_.empty()) << ::testing::PrintToString(gpu.violations_);
  EXPECT_LE(gpu.elapsed_us(), kTrialHostBudgetUs);
  EXPECT_LT(gpu.queued_us_, kTrialBudgetUs - 4 * 1000);
  EXPECT_TRUE(t.challengers[2].stopped.empty()) << t.challengers[2].stopped;
  std::vector<ProgramTrial> all;
  for (const ChallengerTrial& c : t.challengers) all.push_back(c.times);
  EXPECT_TRUE(t.challengers[2].times.challenger_wins(fastest_default(all)));
  const ChallengerTrial& last = t.challengers.back();
  EXPECT_NE(last.stopped.find("ms of host time were spent"), std::string::npos) << last.stopped;
  EXPECT_TRUE(last.out_of_budget);
  EXPECT_FALSE(t.challengers[2].out_of_budget);
  EXPECT_FALSE(last.times.challenger_wins(fastest_default(all)));
}

// The warm-up launches every side once; a kernel the process has not run loads its module then, which took the whole
// 60 ms at a process's first decode problem (16 sides, H200). That one-time cost must not leave the trial no time.
TEST(FirstUseTrialOrder, TheWarmUpsModuleLoadsAreLeftOutOfTheHostBudget) {
  FakeTrialGpu gpu({{10, 12, 9, 12}, {8, 9, 7, 10}});
  gpu.module_load_us_ = kTrialHostBudgetUs;
  const FirstUseTrial t = run_first_use_trial(gpu, floors(gpu));
  EXPECT_TRUE(gpu.violations_.empty()) << ::testing::PrintToString(gpu.violations_);
  EXPECT_TRUE(t.challengers[0].stopped.empty()) << t.challengers[0].stopped;
  EXPECT_TRUE(t.challengers[0].times.challenger_wins(fastest_default({t.challengers[0].times})));
}

// A call alone shows its launch and tail, which back-to-back calls hide (kTrialMinCalls): a batch holds 4 calls where
// 4 take no more than 400 us, else as many as do, one at least; short calls fill 100 us as before, 20 at most.
TEST(FirstUseTrialOrder, ABatchHoldsFourCallsWhereTheyFitIn400UsElseAsManyAsFitAndShortCallsFill100Us) {
  for (const auto& [call_us, calls] :
       {std::pair{75.0, 4}, {99.0, 4}, {150.0, 2}, {210.0, 1}, {500.0, 1}, {20.0, 5}, {2.0, 20}}) {
    FakeTrialGpu gpu({{call_us, call_us, call_us, call_us}, {0.9 * call_us, 0.9 * call_us, 0.9 * call_us, 0.9 * call_us}});
    const FirstUseTrial t = run_first_use_trial(gpu, floors(gpu));
    EXPECT_TRUE(t.challengers[0].stopped.empty()) << call_us << " us: " << t.challengers[0].stopped;
    ASSERT_GE(gpu.timed_calls_.size(), 2u);
    EXPECT_EQ(gpu.timed_calls_.front(), 2) << "the batch that sizes the others";
    for (std::size_t i = 1; i < gpu.timed_calls_.size(); ++i)
      ASSERT_EQ(gpu.timed_calls_[i], calls) << call_us << " us a call, batch " << i;
  }
}

TEST(FirstUseTrialOrder, AWarmBatchIsTimedOnInputsAlreadyInL2NotAfterTheColdBatchesEvictedThem) {
  // Calls of 100-200 us: two calls a batch. The challenger is faster than heuristic-first in every condition, but
  // slower on cold inputs than heuristic-first on warm ones: the first warm batch, which it runs first, must not
  // start on the inputs the cold batches before it evicted, or its slowest batch would lose.
  FakeTrialGpu gpu({{130, 200, 115, 200}, {100, 140, 90, 140}});
  const FirstUseTrial t = run_first_use_trial(gpu, floors(gpu));
  EXPECT_TRUE(gpu.violations_.empty()) << ::testing::PrintToString(gpu.violations_);
  const ProgramTrial& c = t.challengers[0].times;
  EXPECT_TRUE(t.challengers[0].stopped.empty()) << t.challengers[0].stopped;
  EXPECT_DOUBLE_EQ(c.warm.challenger_slowest_us, 100);
  EXPECT_TRUE(c.challenger_wins(fastest_default({c})));
}

TEST(FirstUseTrialOrder, EachChallengerIsStoppedAndJudgedByItsOwnRule) {
  // Two challengers 5% faster than heuristic-first everywhere: one held to 1%, the other to 12%.
  FakeTrialGpu gpu({{10, 10, 10, 10}, {9.5, 9.5, 9.5, 9.5}, {9.5, 9.5, 9.5, 9.5}});
  const FirstUseTrial t = run_first_use_trial(gpu, {{1.01, false}, {1.12, false}});
  EXPECT_TRUE(gpu.violations_.empty()) << ::testing::PrintToString(gpu.violations_);
  ASSERT_EQ(t.challengers.size(), 2u);
  EXPECT_TRUE(t.challengers[0].stopped.empty()) << t.challengers[0].stopped;
  EXPECT_NE(t.challengers[1].stopped.find("no faster than"), std::string::npos) << t.challengers[1].stopped;
  EXPECT_DOUBLE_EQ(t.challengers[0].times.cold.noise_floor, 1.01);
  EXPECT_DOUBLE_EQ(t.challengers[1].times.cold.noise_floor, 1.12);
  const DefaultFastest fastest = fastest_default({t.challengers[0].times, t.challengers[1].times});
  EXPECT_TRUE(t.challengers[0].times.challenger_wins(fastest));
  EXPECT_FALSE(t.challengers[1].times.challenger_wins(fastest));
  EXPECT_FALSE(t.challengers[0].times.own_pairs);
  const FirstUseTrial paired = run_first_use_trial(gpu, {{1.01, true}, {1.12, false}});
  EXPECT_TRUE(paired.challengers[0].times.own_pairs);
  EXPECT_TRUE(paired.challengers[0].stopped.empty()) << paired.challengers[0].stopped;
}

TEST(FirstUseTrialOrder, AChallengerJudgedByMedianRunsEveryConditionUnlessItsMediansSoFarAreFivePercentSlower) {
  // One 0.5% slower cold and 1% faster elsewhere (a floor would stop it at its first cold pair), one 6% slower cold.
  FakeTrialGpu gpu({{10, 10, 10, 10}, {9.9, 10.05, 9.9, 9.9}, {9, 10.6, 9, 9}});
  const ChallengerRule by_median{kTrialNoiseFloor, true, true};
  const FirstUseTrial t = run_first_use_trial(gpu, {by_median, by_median});
  EXPECT_TRUE(gpu.violations_.empty()) << ::testing::PrintToString(gpu.violations_);
  const ChallengerTrial& close = t.challengers[0];
  EXPECT_TRUE(close.stopped.empty()) << close.stopped;
  for (const TrialResult* r : {&close.times.warm, &close.times.cold, &close.times.graph, &close.times.graph_cold})
    EXPECT_GE(r->batches, 3);
  EXPECT_TRUE(close.times.by_median);
  const ChallengerTrial& slow = t.challengers[1];
  EXPECT_EQ(slow.times.cold.batches, 1);
  EXPECT_EQ(slow.times.warm.batches, 0);
  EXPECT_NE(slow.stopped.find("5% or more slower than heuristic-first in its pairs over the conditions so far "
                              "(the product of its median ratios x1.060; in stream cold"),
            std::string::npos)
      << slow.stopped;
  const DefaultFastest fastest = fastest_default({close.times, slow.times});
  EXPECT_TRUE(close.times.challenger_wins(fastest));
  EXPECT_FALSE(slow.times.challenger_wins(fastest));
  const FirstUseTrial floored = run_first_use_trial(gpu, floors(gpu));
  EXPECT_FALSE(floored.challengers[0].stopped.empty());
}

TEST(FirstUseTrialOrder, AByMedianChallengerFasterColdIsNotStoppedByOneSlowerWarmConditionAndWins) {
  // As the framework workspace's algo at 1x3438x121 fp32 (held-out seed 9817, H100): 10% faster cold, 5-6% slower
  // in stream warm, faster from graphs; the other 3% slower cold and warm, stopped once both are in.
  FakeTrialGpu gpu({{10, 10, 10, 10}, {10.6, 9, 9.5, 9.5}, {10.3, 10.3, 9, 9}});
  const ChallengerRule by_median{kTrialNoiseFloor, true, true};
  const FirstUseTrial t = run_first_use_trial(gpu, {by_median, by_median});
  EXPECT_TRUE(gpu.violations_.empty()) << ::testing::PrintToString(gpu.violations_);
  const ChallengerTrial& faster_cold = t.challengers[0];
  EXPECT_TRUE(faster_cold.stopped.empty()) << faster_cold.stopped;
  EXPECT_GE(faster_cold.times.graph_cold.batches, 3);
  EXPECT_LT(faster_cold.times.median_ratio(), 1);
  const ChallengerTrial& slower = t.challengers[1];
  EXPECT_NE(slower.stopped.find("x1.061; in stream warm"), std::string::npos) << slower.stopped;
  EXPECT_EQ(slower.times.graph.batches, 0);
}

TEST(FirstUseTrialOrder, EagersCallIsTimedInEveryConditionHoweverSlowItRunsCold) {
  // Eager's call (the second challenger) 25% slower than heuristic-first cold and 4% faster warm, as at 3009x136x755
  // bias+gelu fp32 (H100 and H200); judged by median, it would stop at its first cold pair.
  FakeTrialGpu gpu({{10, 10, 10, 10}, {9.9, 9.9, 9.9, 9.9}, {9.6, 12.5, 9.6, 12.5}});
  const ChallengerRule by_median{kTrialNoiseFloor, true, true};
  ChallengerRule eager = by_median;
  eager.full = true;
  const FirstUseTrial t = run_first_use_trial(gpu, {by_median, eager});
  EXPECT_TRUE(gpu.violations_.empty()) << ::testing::PrintToString(gpu.violations_);
  const ChallengerTrial& e = t.challengers[1];
  EXPECT_TRUE(e.stopped.empty()) << e.stopped;
  for (const TrialResult* r : {&e.times.warm, &e.times.cold, &e.times.graph, &e.times.graph_cold})
    EXPECT_GE(r->batches, 3);
  EXPECT_NEAR(e.times.warm.challenger_us / e.times.warm.default_us, 0.96, 1e-9);
  const FirstUseTrial stopped = run_first_use_trial(gpu, {by_median, by_median});
  EXPECT_FALSE(stopped.challengers[1].stopped.empty());
  EXPECT_EQ(stopped.challengers[1].times.warm.batches, 0);
}

TEST(FirstUseTrialOrder, WhereTheBudgetFinishesOneChallengerAfterTheFirstPairsItIsEagersCallNotTheFastest) {
  // one_ms_calls with the second challenger eager's call, 10% slower than heuristic-first in its first cold batch.
  std::vector<std::array<double, 4>> us = one_ms_calls();
  us[2][kCold] = 1100;
  FakeTrialGpu gpu(us);
  std::vector<ChallengerRule> rules = floors(gpu);
  rules[1] = {kTrialNoiseFloor, true, true};
  rules[1].full = true;
  const FirstUseTrial t = run_first_use_trial(gpu, rules);
  EXPECT_TRUE(gpu.violations_.empty()) << ::testing::PrintToString(gpu.violations_);
  EXPECT_TRUE(t.challengers[1].stopped.empty()) << t.challengers[1].stopped;
  EXPECT_NE(t.challengers[3].stopped.find("not timed in full"), std::string::npos) << t.challengers[3].stopped;
}

TEST(FirstUseTrialOrder, RulesThatAreNotOnePerChallengerAreRefusedBeforeAnyStep) {
  FakeTrialGpu gpu({{10, 12, 9, 12}, {8, 9, 7, 9}});
  EXPECT_THROW(run_first_use_trial(gpu, {}), CheckError);
  EXPECT_THROW(run_first_use_trial(gpu, {{1.01, false}, {1.01, false}}), CheckError);
  EXPECT_TRUE(gpu.steps_.empty());
}

TEST(FirstUseTrialOrder, NoChallengersNoSteps) {
  FakeTrialGpu gpu({{10, 12, 9, 12}});
  const FirstUseTrial t = run_first_use_trial(gpu, floors(gpu));
  EXPECT_TRUE(t.challengers.empty());
  EXPECT_TRUE(gpu.steps_.empty());
}

}  // namespace
}  // namespace gemmtune::runtime
