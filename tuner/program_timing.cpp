#include "tuner/program_timing.hpp"

#include <algorithm>
#include <optional>

#include "common/error.hpp"
#include "cuda/graph.hpp"
#include "cuda/stream.hpp"
#include "tuner/statistics.hpp"

namespace gemmtune {

std::vector<ProgramCondition> program_conditions(const TimingSettings& t) {
  std::vector<ProgramCondition> out;
  for (const bool graph : {false, true}) {
    if (graph ? !t.launch_graph : !t.launch_stream) continue;
    for (const bool cold : {false, true})
      if (cold ? t.l2_cold : t.l2_warm) out.push_back({graph, cold});
  }
  return out;
}

int warm_placements(int input_sets) { return std::clamp(input_sets, 1, kWarmPlacements); }

int warm_input_set(int repeat, int input_sets) { return repeat % warm_placements(input_sets); }

ProgramBatching program_batching(double typical_call_us, std::size_t conditions, std::size_t finalists) {
  constexpr double kBatchTargetUs = 1000, kStageBudgetUs = 150000;
  ProgramBatching b;
  const double call = std::max(typical_call_us, 1.0);
  b.calls = std::clamp(static_cast<int>(kBatchTargetUs / call), 4, 20);
  const double per_repeat = call * b.calls * static_cast<double>(std::max<std::size_t>(1, conditions * finalists));
  b.repeats = std::clamp(static_cast<int>(kStageBudgetUs / per_repeat), 3, 9);
  return b;
}

std::vector<std::vector<ConditionTime>> time_as_program(const std::vector<const CandidateLauncher*>& launchers,
                                                        const ProblemBuffers& buffers, const TimingSettings& settings,
                                                        double typical_call_us, const L2Flush* flush,
                                                        MeasureContext& ctx) {
  const std::vector<ProgramCondition> conditions = program_conditions(settings);
  const ProgramBatching batching = program_batching(typical_call_us, conditions.size(), launchers.size());
  const cudaStream_t s = ctx.stream;
  // As the ranking stage: without CUPTI a profiler holds the GPU and may serialize launches, so nothing is held.
  const bool hold_stream = std::string(ctx.timer.name()) == "cupti";
  // A cold batch's calls rotate over every set; a warm batch reads set `warm_set` alone.
  const auto enqueue_calls = [&](const CandidateLauncher& l, bool cold, int warm_set) {
    for (int i = 0; i < batching.calls; ++i) l.launch(buffers.operands(cold ? i : warm_set), s);
  };
  const int warm_sets = warm_placements(buffers.sets());
  const auto placements = [&](std::size_t c) { return conditions[c].cold ? 1 : warm_sets; };

  // graphs[l][c][set]: one graph per warm set a warm condition reads, one for a cold condition.
  std::vector<std::vector<std::vector<std::optional<CudaGraphExec>>>> graphs(launchers.size());
  for (std::size_t l = 0; l < launchers.size(); ++l) {
    graphs[l].resize(conditions.size());
    for (std::size_t c = 0; c < conditions.size(); ++c) {
      graphs[l][c].resize(static_cast<std::size_t>(placements(c)));
      if (!conditions[c].graph) continue;
      for (int set = 0; set < placements(c); ++set) {
        std::optional<CudaGraphExec>& g = graphs[l][c][static_cast<std::size_t>(set)];
        g.emplace(CudaGraphExec::capture(s, [&] { enqueue_calls(*launchers[l], conditions[c].cold, set); }));
        g->upload(s);
      }
    }
  }

  const CudaEvent start, stop;
  // One batch, held behind the blocking kernel or not; nullopt where the blocking kernel timed out.
  const auto batch_us = [&](std::size_t l, std::size_t c, int set, bool held) -> std::optional<double> {
    if (held) ctx.blocker.block(s);
    // Outside the events: the flush evicts the inputs, its own time is no part of the calls'.
    if (conditions[c].cold && flush) flush->run(s);
    start.record(s);
    if (const std::optional<CudaGraphExec>& g = graphs[l][c][static_cast<std::size_t>(set)])
      g->launch(s);
    else
      enqueue_calls(*launchers[l], conditions[c].cold, set);
    stop.record(s);
    if (held) ctx.blocker.release();
    GT_CUDA_CALL(cudaStreamSynchronize(s));
    if (held && batch_timed_out(ctx)) return std::nullopt;
    return 1e3 * static_cast<double>(stop.elapsed_ms_since(start)) / batching.calls;
  };
  // A batch whose blocking kernel timed out is discarded and run again, once.
  const auto timed_batch_us = [&](std::size_t l, std::size_t c, int set) {
    for (int attempt = 0; attempt < 2; ++attempt)
      if (const std::optional<double> us = batch_us(l, c, set, hold_stream)) return *us;
    throw CheckError("the blocking kernel timed out twice in the finalist stage");
  };

  // One condition at a time, as a program runs: a warm condition's batches follow each other, so its inputs are in
  // L2 as a loop of calls keeps them. Interleaved with cold batches, each warm batch started on an evicted L2 that
  // a 45 MB weight took more than its 20 calls to win back (1x13824x808 tf32 on an H200: cuBLASLt's GEMV timed
  // 18 us "warm" here and 15 us in a program's loop, and a skinny kernel kept at 1.2x ran 0.95x there).
  std::vector<std::vector<std::vector<double>>> samples(launchers.size(),
                                                        std::vector<std::vector<double>>(conditions.size()));
  for (std::size_t c = 0; c < conditions.size(); ++c) {
    // Warm-up, not held (blocking_kernel.hpp): each graph's first launch, each launcher's kernels and the flush run
    // once before anything waits behind the blocking kernel; set 0, which the first repeat reads, last.
    for (int set = placements(c) - 1; set >= 0; --set)
      for (std::size_t l = 0; l < launchers.size(); ++l) batch_us(l, c, set, false);
    int last_set = 0;
    for (int r = 0; r < batching.repeats; ++r) {
      const int set = conditions[c].cold ? 0 : warm_input_set(r, buffers.sets());
      // Another set than the last repeat's: bring it into L2 before anything is timed on it.
      if (set != last_set) batch_us(static_cast<std::size_t>(r) % launchers.size(), c, set, false);
      last_set = set;
      for (std::size_t j = 0; j < launchers.size(); ++j) {
        const std::size_t l = (j + static_cast<std::size_t>(r)) % launchers.size();
        samples[l][c].push_back(timed_batch_us(l, c, set));
      }
    }
  }
  // These batches' kernels belong to no timed call of the ranking stage: drop their records now.
  ctx.timer.collect();

  std::vector<std::vector<ConditionTime>> out(launchers.size());
  for (std::size_t l = 0; l < launchers.size(); ++l)
    for (std::size_t c = 0; c < conditions.size(); ++c) {
      const TimingStats t = summarize(samples[l][c]);
      out[l].push_back({conditions[c].name(), t.median_us, t.rel_spread()});
    }
  return out;
}

}  // namespace gemmtune
