#include "runtime/first_use_trial.hpp"

#include <algorithm>
#include <functional>
#include <random>
#include <vector>

#include "cuda/graph.hpp"
#include "cuda/stream.hpp"
#include "launch/blocking_kernel.hpp"
#include "launch/problem_buffers.hpp"

namespace gemmtune::runtime {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace

double trial_noise_floor(const Candidate& heuristic_first) {
  return heuristic_first.lt_clustered() ? 1.12 : 1.01;
}

DefaultFastest fastest_default(const std::vector<ProgramTrial>& trials) {
  if (trials.empty()) return {};  // zeros, which no challenger beats
  DefaultFastest d{trials.front().warm.default_fastest_us, trials.front().cold.default_fastest_us,
                   trials.front().graph.default_fastest_us};
  for (const ProgramTrial& t : trials) {
    d.warm_us = std::min(d.warm_us, t.warm.default_fastest_us);
    d.cold_us = std::min(d.cold_us, t.cold.default_fastest_us);
    d.graph_us = std::min(d.graph_us, t.graph.default_fastest_us);
  }
  return d;
}

ProgramTrial first_use_trial(const CandidateLauncher& challenger, const CandidateLauncher& fallback,
                             std::size_t l2_bytes) {
  constexpr double kBatchUs = 100, kBudgetUs = 500;  // per condition
  const CudaStream stream;
  const cudaStream_t s = stream.get();
  const ProblemBuffers buffers(challenger.gemm(), l2_bytes, (std::uint64_t{std::random_device{}()} << 32) | 1u, s);
  BlockingKernel blocker;
  const CudaEvent start, stop;
  const auto timed_us = [&](const std::function<void()>& enqueue, int calls) {
    blocker.block(s);
    start.record(s);
    enqueue();
    stop.record(s);
    blocker.release();
    GT_CUDA_CALL(cudaStreamSynchronize(s));
    return 1e3 * static_cast<double>(stop.elapsed_ms_since(start)) / calls;
  };
  int next_set = 0;
  // One batch of back-to-back calls; the graph condition captures the warm one.
  const auto enqueue_batch = [&](const CandidateLauncher& l, int calls, bool cold) {
    for (int i = 0; i < calls; ++i) l.launch(buffers.operands(cold ? next_set++ : 0), s);
  };
  const auto batch_us = [&](const CandidateLauncher& l, int calls, bool cold) {
    return timed_us([&] { enqueue_batch(l, calls, cold); }, calls);
  };
  // A first batch of each loads its kernels and gives the batch size: about 100 us of calls.
  const double call_us = std::max({batch_us(challenger, 2, true), batch_us(fallback, 2, true), 1.0});
  const int calls = std::clamp(static_cast<int>(kBatchUs / call_us), 1, 20);
  const int rounds = std::clamp(static_cast<int>(kBudgetUs / (2 * calls * call_us)), 3, 9);
  // Rounds of one batch each, the side that goes first alternating.
  using Batch = std::function<double()>;
  const auto trial = [&](const Batch& challenger_batch, const Batch& default_batch) {
    std::vector<double> a, b;
    for (int r = 0; r < rounds; ++r) {
      const bool challenger_first = r % 2 == 0;
      const double first = challenger_first ? challenger_batch() : default_batch();
      const double second = challenger_first ? default_batch() : challenger_batch();
      a.push_back(challenger_first ? first : second);
      b.push_back(challenger_first ? second : first);
    }
    return TrialResult{median(a), median(b), *std::max_element(a.begin(), a.end()),
                       *std::min_element(b.begin(), b.end()), trial_noise_floor(fallback.candidate())};
  };
  ProgramTrial t;
  t.warm = trial([&] { return batch_us(challenger, calls, false); }, [&] { return batch_us(fallback, calls, false); });
  t.cold = trial([&] { return batch_us(challenger, calls, true); }, [&] { return batch_us(fallback, calls, true); });
  const auto graph_of = [&](const CandidateLauncher& l) {
    return CudaGraphExec::capture(s, [&] { enqueue_batch(l, calls, false); });
  };
  const CudaGraphExec challenger_graph = graph_of(challenger), default_graph = graph_of(fallback);
  const auto replay_us = [&](const CudaGraphExec& g) { return timed_us([&] { g.launch(s); }, calls); };
  replay_us(challenger_graph);  // the first replay uploads the graph
  replay_us(default_graph);
  t.graph = trial([&] { return replay_us(challenger_graph); }, [&] { return replay_us(default_graph); });
  return t;
}

}  // namespace gemmtune::runtime
