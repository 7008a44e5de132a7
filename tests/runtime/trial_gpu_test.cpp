// The first-use trial on the GPU (runtime/trial_gpu.hpp): real launchers of the no-entry set on the scratch the
// runtime keeps across problems.
#include "runtime/trial_gpu.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "cuda/device_info.hpp"
#include "lt/no_entry_candidates.hpp"
#include "support/gpu_test.hpp"
#include "launch/device_footprint.hpp"

namespace gemmtune::runtime {
namespace {

constexpr std::size_t kWorkspace = std::size_t{64} << 20;

GemmProblem problem(std::int64_t m, std::int64_t n, std::int64_t k, MathMode mode, const char* epilogue) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.mode = mode;
  p.epi = Epilogue::parse(epilogue);
  return p;
}

// Issue 37's shapes (7x5632x823 fp32 and 86x1536x488 tf32 waited 10 s at their first call) and one where the unfused
// call ran 1.6x faster (328x1816x136 tf32), each tried on one scratch one after another with every no-entry
// challenger: the unfused call, and for 7x5632x823, whose k is no multiple of 4, the padded one too.
TEST(TrialGpu, TrialsOfTheNoEntryChallengersOneAfterAnotherDiscardNothingAndTakeMilliseconds) {
  GT_REQUIRE_GPU();
  const DeviceInfo device = query_device(0);
  const LtHandle lt = make_lt_handle();
  TrialScratch scratch(device.l2_bytes, kWorkspace);
  for (const GemmProblem& p : {problem(7, 5632, 823, MathMode::Fp32, "bias+gelu"),
                               problem(86, 1536, 488, MathMode::Tf32, "bias+gelu"),
                               problem(328, 1816, 136, MathMode::Tf32, "bias+gelu")}) {
    const std::optional<NoEntryCandidates> set = no_entry_candidates(p, lt_heuristic_first_of(p, lt.get()), kWorkspace);
    ASSERT_TRUE(set) << p.key();
    // The plain GEMM + our epilogue first, then cuBLASLt's bias + our kernel for the gelu, the padded GEMM where k
    // leaves rows unaligned, any other algo the heuristic answers at a framework's smaller workspace, cuBLAS's own
    // choice last.
    ASSERT_GE(set->challengers.size(), p.k % 4 == 0 ? 3u : 4u) << p.key();
    EXPECT_TRUE(set->challengers[0].lt_epilogue_kernel && !set->challengers[0].lt_padded &&
                !set->challengers[0].lt_bias_in_gemm)
        << p.key();
    EXPECT_TRUE(set->challengers[1].lt_bias_in_gemm) << p.key();
    EXPECT_EQ(set->challengers[2].lt_padded, p.k % 4 != 0) << p.key();
    EXPECT_EQ(set->challengers.back().backend, Backend::Blas) << p.key();
    const CandidateLauncher fused(p, set->heuristic_first, lt.get(), scratch.workspace());
    std::vector<std::unique_ptr<CandidateLauncher>> challengers;
    std::vector<const CandidateLauncher*> sides = {&fused};
    for (const Candidate& c : set->challengers) {
      challengers.push_back(std::make_unique<CandidateLauncher>(p, c, lt.get(), scratch.workspace()));
      sides.push_back(challengers.back().get());
    }
    const auto t0 = std::chrono::steady_clock::now();
    CudaTrialGpu gpu(scratch, sides);
    std::vector<ChallengerRule> rules;
    for (const Candidate& c : set->challengers) rules.push_back(challenger_rule(set->heuristic_first, c));
    const FirstUseTrial t = run_first_use_trial(gpu, rules);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    scratch.trim();
    EXPECT_EQ(t.discarded_batches, 0) << p.key();
    EXPECT_LT(ms, 1000) << p.key() << ": a trial must never come near the blocking kernel's 10 s timeout";
    EXPECT_GT(t.gpu_us, 0) << p.key();
    ASSERT_EQ(t.challengers.size(), set->challengers.size());
    for (const ChallengerTrial& challenger : t.challengers) {
      const ProgramTrial& c = challenger.times;
      EXPECT_GE(c.cold.batches, 1) << p.key();
      EXPECT_GT(c.cold.challenger_us, 0) << p.key();
      EXPECT_GT(c.cold.default_fastest_us, 0) << p.key();
      if (challenger.stopped.empty()) {
        EXPECT_GE(c.graph.batches, 3) << p.key();
        EXPECT_GE(c.graph_cold.batches, 3) << p.key();
      }
    }
  }
}

TEST(TrialGpu, TheScratchHoldsEveryInputSetAlignedAndIsReusedForASmallerProblem) {
  GT_REQUIRE_GPU();
  const DeviceInfo device = query_device(0);
  TrialScratch scratch(device.l2_bytes, kWorkspace);
  const GemmProblem big = problem(1024, 4096, 1024, MathMode::Tf32, "bias+gelu");
  const GemmProblem small = problem(64, 256, 256, MathMode::Tf32, "bias");  // 64 sets of 0.3 MB
  const std::vector<GemmOperands> a = scratch.operands_for(big);
  ASSERT_EQ(static_cast<int>(a.size()), input_set_count(big, device.l2_bytes));
  for (const GemmOperands& x : a)
    for (const void* ptr : {static_cast<const void*>(x.A), static_cast<const void*>(x.B),
                            static_cast<const void*>(x.bias), static_cast<const void*>(x.Y)})
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(ptr) % 256, 0u);
  EXPECT_EQ(a[0].Y, a.back().Y) << "the sets share one output";
  const std::vector<GemmOperands> b = scratch.operands_for(small);
  EXPECT_EQ(b[0].A, a[0].A) << "a smaller problem reuses what a larger one allocated";
  EXPECT_EQ(b[0].Y, a[0].Y);
  scratch.trim();  // within kept_bytes(): kept
  EXPECT_EQ(scratch.operands_for(small)[0].A, a[0].A);
}

// 32x2048x4096 tf32: a set's B is 32 MiB, inside the H200's L2. A cold graph replays the same sets every batch, so
// without the eviction between batches the second finds them in L2.
TEST(TrialGpu, AColdGraphAfterAnEvictionReadsItsInputsFromDramNotFromTheReplayBefore) {
  GT_REQUIRE_GPU();
  const DeviceInfo device = query_device(0);
  const GemmProblem p = problem(32, 2048, 4096, MathMode::Tf32, "none");
  if (std::size_t{2048} * 4096 * sizeof(float) * 2 > device.l2_bytes)
    GTEST_SKIP() << "this GPU's L2 (" << device.l2_bytes << " bytes) holds less than two of the problem's B";
  const LtHandle lt = make_lt_handle();
  TrialScratch scratch(device.l2_bytes, kWorkspace);
  const std::optional<NoEntryCandidates> set = no_entry_candidates(p, lt_heuristic_first_of(p, lt.get()), kWorkspace);
  ASSERT_TRUE(set);
  const CandidateLauncher launcher(p, set->heuristic_first, lt.get(), scratch.workspace());
  CudaTrialGpu gpu(scratch, {&launcher});
  constexpr int kCalls = 1;  // one set: in L2 after one replay
  gpu.launch(0, 0);
  gpu.capture_graph(0, kCalls, true);
  gpu.replay_graph(0, true);
  gpu.evict_l2();
  gpu.wait();
  const auto batch_us = [&](bool evict) {
    gpu.block();
    if (evict) gpu.evict_l2();
    gpu.start_timer();
    gpu.replay_graph(0, true);
    gpu.stop_timer();
    EXPECT_TRUE(gpu.release_and_wait());
    return gpu.timed_us();
  };
  double evicted = 1e9, again = 1e9;
  for (int i = 0; i < 5; ++i) {
    evicted = std::min(evicted, batch_us(true));
    again = std::min(again, batch_us(false));
  }
  EXPECT_GT(evicted, 1.2 * again) << "after an eviction " << evicted << " us, replayed again " << again << " us";
}

}  // namespace
}  // namespace gemmtune::runtime
