#include "tuner/measurement_loop.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>

#include "cuda/stream.hpp"
#include "nvtx/case_range.hpp"
#include "nvtx/nvtx_range.hpp"
#include "tuner/candidate_pruning.hpp"
#include "tuner/sm_clock.hpp"
#include "tuner/statistics.hpp"
#include "tuner/stopping_rule.hpp"
#include "tuner/test_slowdown.hpp"

namespace gemmtune {
namespace {

// One batch: the blocking kernel holds the stream while every call is queued, so the GPU runs them back to back.
// Only the calls run inside the case's NVTX range (the blocking kernel is no part of the case). Without CUPTI
// (a profiler holds it, and may serialize every launch) the blocking kernel would only wait for its timeout.
std::vector<double> run_batch(const CandidateLauncher& launcher, const ProblemBuffers& buffers, int calls,
                              int* next_set, std::uint64_t spin_ns, const std::string& range_name,
                              MeasureContext& ctx) {
  const bool hold_stream = std::string(ctx.timer.name()) == "cupti";
  if (hold_stream) ctx.blocker.block(ctx.stream);
  {
    const NvtxRange range(range_name);
    for (int i = 0; i < calls; ++i) {
      // Launched outside the call: CUPTI's kernel records of the call and its span leave the flush out.
      if (ctx.l2_flush) ctx.l2_flush->run(ctx.stream);
      ctx.timer.begin_call(ctx.stream);
      launcher.launch(buffers.operands((*next_set)++), ctx.stream);
      if (spin_ns) launch_spin_ns(spin_ns, ctx.stream);
      ctx.timer.end_call(ctx.stream);
    }
  }
  if (hold_stream) ctx.blocker.release();
  GT_CUDA_CALL(cudaStreamSynchronize(ctx.stream));
  std::vector<double> samples = ctx.timer.collect();
  if (hold_stream && batch_timed_out(ctx)) return {};
  return samples;
}

// `calls` calls (at least one) and the L2 flush, waited for, before any batch: a kernel's first launch may wait for the
// GPU (lazy module loading), and queued behind the blocking kernel it would wait out its timeout.
void warm_unblocked(const CandidateLauncher& launcher, const ProblemBuffers& buffers, int calls, int* next_set,
                    MeasureContext& ctx) {
  for (int i = 0; i < std::max(calls, 1); ++i) launcher.launch(buffers.operands((*next_set)++), ctx.stream);
  if (ctx.l2_flush) ctx.l2_flush->run(ctx.stream);
  GT_CUDA_CALL(cudaStreamSynchronize(ctx.stream));
}

// Events around `calls` back-to-back calls, divided by `calls`: an independent check on the kernel-time median.
double events_per_call_us(const CandidateLauncher& launcher, const ProblemBuffers& buffers, int calls, int* next_set,
                          cudaStream_t s) {
  const CudaEvent start, stop;
  start.record(s);
  for (int i = 0; i < calls; ++i) launcher.launch(buffers.operands((*next_set)++), s);
  stop.record(s);
  GT_CUDA_CALL(cudaStreamSynchronize(s));
  return 1e3 * static_cast<double>(stop.elapsed_ms_since(start)) / calls;
}

// The test-only slowdown of this candidate's backend (tuner/test_slowdown.hpp) as nanoseconds of spin per call, from
// one calibration batch; 0, and nothing run, in a normal build.
std::uint64_t test_slowdown_spin_ns(const CandidateLauncher& launcher, const ProblemBuffers& buffers,
                                    const TimingSettings& settings, int* next_set, MeasureContext& ctx) {
  const double pct = test_slowdown_pct(launcher.candidate());
  if (pct <= 0) return 0;
  const TimingStats calibration =
      summarize(run_batch(launcher, buffers, settings.batch_calls, next_set, 0, "calibration", ctx));
  const auto spin_ns = static_cast<std::uint64_t>(calibration.median_us * pct * 10.0);  // pct% of the call, in ns
  launch_spin_ns(spin_ns, ctx.stream);  // its first launch, outside any batch
  GT_CUDA_CALL(cudaStreamSynchronize(ctx.stream));
  return spin_ns;
}

}  // namespace

bool batch_timed_out(const MeasureContext& ctx) {
  if (!ctx.blocker.timed_out()) return false;
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    std::fprintf(stderr, "gemmtune: warning: the blocking kernel timed out before a batch was queued (something "
                         "queued behind it waited for the GPU); that batch was discarded\n");
  return true;
}

TimingStats time_first_batch(const CandidateLauncher& launcher, const ProblemBuffers& buffers,
                             const TimingSettings& settings, MeasureContext& ctx) {
  int next_set = 0;
  warm_unblocked(launcher, buffers, 1, &next_set, ctx);
  const std::uint64_t spin_ns = test_slowdown_spin_ns(launcher, buffers, settings, &next_set, ctx);
  const int calls = std::max(settings.warmup_calls, kMinFirstBatchCalls);
  const std::string case_range = nvtx_case_range(launcher.problem(), launcher.candidate());
  std::vector<double> samples = run_batch(launcher, buffers, calls, &next_set, spin_ns, case_range, ctx);
  if (samples.empty()) samples = run_batch(launcher, buffers, calls, &next_set, spin_ns, case_range, ctx);  // timed out
  TimingStats stats = summarize(std::move(samples));
  stats.timer = ctx.timer.name();
  stats.sm_clock_mhz = measure_sm_clock_mhz(ctx.stream);
  return stats;
}

TimingStats measure_candidate(const CandidateLauncher& launcher, const ProblemBuffers& buffers,
                              const TimingSettings& settings, MeasureContext& ctx) {
  int next_set = 0;
  warm_unblocked(launcher, buffers, settings.warmup_calls, &next_set, ctx);

  const std::string case_range = nvtx_case_range(launcher.problem(), launcher.candidate());
  const std::uint64_t spin_ns = test_slowdown_spin_ns(launcher, buffers, settings, &next_set, ctx);
  NoiseStoppingRule rule(settings);
  // The rule caps kernel time; this caps wall time too, for calls whose host overhead dwarfs their kernels.
  const auto wall_cap = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<long>(std::max(1000.0, 5 * settings.max_time_ms)));
  while (!rule.done() && std::chrono::steady_clock::now() < wall_cap)
    rule.add(run_batch(launcher, buffers, settings.batch_calls, &next_set, spin_ns, case_range, ctx));
  TimingStats stats = summarize(rule.samples());
  stats.timer = ctx.timer.name();
  stats.stopped_by = rule.done() ? rule.reason() : "wall cap";
  stats.events_per_call_us = events_per_call_us(launcher, buffers, 20, &next_set, ctx.stream);
  stats.sm_clock_mhz = measure_sm_clock_mhz(ctx.stream);
  return stats;
}

}  // namespace gemmtune
