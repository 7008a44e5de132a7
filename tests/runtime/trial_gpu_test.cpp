// The first-use trial on the GPU (runtime/trial_gpu.hpp): real launchers of the no-entry set on the scratch the
// runtime keeps across problems.
#include "runtime/trial_gpu.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "cuda/device_info.hpp"
#include "cupti/l2_flush.hpp"
#include "lt/no_entry_candidates.hpp"
#include "support/gpu_test.hpp"
#include "launch/blocking_kernel.hpp"
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
    for (const Candidate& c : set->challengers)
      rules.push_back(challenger_rule(set->heuristic_first, c, /*no_entry=*/true));
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

// A cold graph replays sets 1, 2, … every batch, so the eviction before each batch must leave none of them in L2.
// Timed as reads of set 1's B (24 MiB, inside L2): after they were just read, and after the eviction. (Timing a cold
// graph's GEMM instead proved nothing: the small GEMVs, whose cold graphs the held-out benchmark times 1.2-1.5x
// slower, ran no faster from L2 in batches of their own, 1x1024x768 10.4-10.9 us a call either way on the H200.)
TEST(TrialGpu, TheScratchsEvictionLeavesNoneOfTheFirstSetsInL2) {
  GT_REQUIRE_GPU();
  const DeviceInfo device = query_device(0);
  const GemmProblem p = problem(64, 6144, 1024, MathMode::Tf32, "none");
  constexpr std::size_t kBBytes = std::size_t{6144} * 1024 * sizeof(float);
  if (2 * kBBytes > device.l2_bytes)
    GTEST_SKIP() << "this GPU's L2 (" << device.l2_bytes << " bytes) holds less than two of the problem's B";
  TrialScratch scratch(device.l2_bytes, kWorkspace);
  const std::vector<GemmOperands> sets = scratch.operands_for(p);
  ASSERT_GE(sets.size(), 2u);
  const DeviceBuffer<int> sink(1);
  const cudaStream_t s = scratch.stream();
  const auto read_us = [&](bool evict_first) {
    if (evict_first)
      scratch.evict_l2();
    else
      read_to_evict_l2(sets[1].B, kBBytes, sink.get(), s);
    scratch.start().record(s);
    read_to_evict_l2(sets[1].B, kBBytes, sink.get(), s);
    scratch.stop().record(s);
    GT_CUDA_CALL(cudaStreamSynchronize(s));
    return 1e3 * static_cast<double>(scratch.stop().elapsed_ms_since(scratch.start()));
  };
  double evicted = 1e9, resident = 1e9;
  for (int i = 0; i < 5; ++i) {
    evicted = std::min(evicted, read_us(true));
    resident = std::min(resident, read_us(false));
  }
  std::printf("reading 24 MiB of set 1: %.2f us after the eviction, %.2f us read again\n", evicted, resident);
  EXPECT_GT(evicted, 1.2 * resident);
}

// The eviction rewrites the last 2× L2 of the inputs' memory to leave L2 dirty; the sets there must keep their values,
// or later trials would time GEMMs of whatever it wrote (zeros run faster than random inputs).
TEST(TrialGpu, TheScratchsEvictionLeavesTheInputsItRewritesUnchanged) {
  GT_REQUIRE_GPU();
  const DeviceInfo device = query_device(0);
  TrialScratch scratch(device.l2_bytes, kWorkspace);
  const GemmProblem p = problem(64, 6144, 1024, MathMode::Tf32, "bias");
  const std::vector<GemmOperands> sets = scratch.operands_for(p);
  const GemmOperands& last = sets.back();  // within the last 2× L2 of the memory
  const std::size_t count = static_cast<std::size_t>(p.k * p.n);
  const auto copy_b = [&] {
    std::vector<float> host(count);
    GT_CUDA_CALL(cudaMemcpyAsync(host.data(), last.B, count * sizeof(float), cudaMemcpyDeviceToHost, scratch.stream()));
    GT_CUDA_CALL(cudaStreamSynchronize(scratch.stream()));
    return host;
  };
  const std::vector<float> before = copy_b();
  ASSERT_TRUE(std::any_of(before.begin(), before.end(), [](float v) { return v != 0.f; })) << "inputs never filled";
  scratch.evict_l2();
  const std::vector<float> after = copy_b();
  EXPECT_EQ(0, std::memcmp(before.data(), after.data(), count * sizeof(float)));
}

// The call's inputs are the trial's only where each starts on 256 bytes, as the scratch's do: a launcher or cuBLASLt
// algo chosen for aligned operands must not be timed on others.
TEST(TrialGpu, TheCallersInputsAreTakenOnlyWhereEveryOneStartsOn256Bytes) {
  alignas(256) static float memory[3 * 256];
  GemmOperands x;
  x.A = memory;
  x.B = memory + 256;
  x.bias = memory + 512;
  const cudaStream_t s = reinterpret_cast<cudaStream_t>(std::uintptr_t{0x100});
  const std::optional<CallerInputs> all = caller_inputs(x, true, s);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->A, x.A);
  EXPECT_EQ(all->B, x.B);
  EXPECT_EQ(all->bias, x.bias);
  EXPECT_EQ(all->stream, s);
  EXPECT_EQ(caller_inputs(x, false, s)->bias, nullptr) << "a problem without a bias reads none";
  GemmOperands shifted = x;
  shifted.B = memory + 256 + 4;  // 16-byte aligned, not 256
  EXPECT_FALSE(caller_inputs(shifted, true, s));
  shifted = x;
  shifted.bias = memory + 513;
  EXPECT_FALSE(caller_inputs(shifted, true, s));
  EXPECT_TRUE(caller_inputs(shifted, false, s)) << "the bias of a problem without one is not read";
  shifted = x;
  shifted.A = nullptr;
  EXPECT_FALSE(caller_inputs(shifted, true, s));
}

// The warm set reads the call's A and B once the work queued before them on the call's stream has run, and writes
// the scratch's Y, not the call's.
TEST(TrialGpu, TheWarmSetReadsTheCallersInputsAfterTheirStreamAndWritesTheScratchsOutput) {
  GT_REQUIRE_GPU();
  const DeviceInfo device = query_device(0);
  const LtHandle lt = make_lt_handle();
  TrialScratch scratch(device.l2_bytes, kWorkspace);
  const GemmProblem p = problem(64, 256, 128, MathMode::Fp32, "none");
  const std::optional<NoEntryCandidates> set = no_entry_candidates(p, lt_heuristic_first_of(p, lt.get()), kWorkspace);
  ASSERT_TRUE(set);
  const CandidateLauncher heuristic_first(p, set->heuristic_first, lt.get(), scratch.workspace());
  std::vector<float> a(static_cast<std::size_t>(p.m * p.k)), b(static_cast<std::size_t>(p.k * p.n));
  std::uint32_t state = 12345;
  const auto uniform = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / 16777216.0f * 2 - 1;
  };
  for (float& v : a) v = uniform();
  for (float& v : b) v = uniform();
  const DeviceBuffer<float> A(a.size()), B(b.size()), staged_a(a.size()), staged_b(b.size()),
      callers_y(static_cast<std::size_t>(p.m * p.n));
  GT_CUDA_CALL(cudaMemcpy(staged_a.get(), a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
  GT_CUDA_CALL(cudaMemcpy(staged_b.get(), b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
  GT_CUDA_CALL(cudaMemset(A.get(), 0xff, a.size() * sizeof(float)));  // NaN until the caller's stream writes them
  GT_CUDA_CALL(cudaMemset(B.get(), 0xff, b.size() * sizeof(float)));
  GT_CUDA_CALL(cudaMemset(callers_y.get(), 0xff, callers_y.size() * sizeof(float)));
  const CudaStream caller;
  BlockingKernel blocker;
  blocker.block(caller.get());  // the inputs' writes wait behind it
  GT_CUDA_CALL(cudaMemcpyAsync(A.get(), staged_a.get(), a.size() * sizeof(float), cudaMemcpyDeviceToDevice,
                               caller.get()));
  GT_CUDA_CALL(cudaMemcpyAsync(B.get(), staged_b.get(), b.size() * sizeof(float), cudaMemcpyDeviceToDevice,
                               caller.get()));
  GemmOperands x;
  x.A = A.get();
  x.B = B.get();
  x.Y = callers_y.get();
  CudaTrialGpu gpu(scratch, {&heuristic_first}, caller_inputs(x, false, caller.get()));
  gpu.launch(0, 0);
  EXPECT_FALSE(stream_drained(scratch.stream())) << "the trial's first call ran before the inputs were written";
  blocker.release();
  gpu.wait();
  ASSERT_FALSE(blocker.timed_out());
  GT_CUDA_CALL(cudaStreamSynchronize(caller.get()));
  std::vector<float> y(static_cast<std::size_t>(p.m * p.n)), untouched(y.size());
  GT_CUDA_CALL(cudaMemcpy(y.data(), scratch.operands_for(p).front().Y, y.size() * sizeof(float),
                          cudaMemcpyDeviceToHost));
  GT_CUDA_CALL(cudaMemcpy(untouched.data(), callers_y.get(), y.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      double want = 0;
      for (std::int64_t l = 0; l < p.k; ++l)
        want += static_cast<double>(a[static_cast<std::size_t>(i * p.k + l)]) * b[static_cast<std::size_t>(l * p.n + j)];
      ASSERT_NEAR(y[static_cast<std::size_t>(i * p.n + j)], want, 1e-4) << "Y(" << i << ", " << j << ")";
    }
  for (float v : untouched) ASSERT_TRUE(std::isnan(v)) << "the trial wrote the call's Y";
}

}  // namespace
}  // namespace gemmtune::runtime
