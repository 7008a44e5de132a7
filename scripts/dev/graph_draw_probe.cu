// graph_draw_probe: can the runtime tell a fast graph instance of a repeated call from a slow one by timing single
// replays, as CallGraphs already samples them?
//
// The runtime replays a repeated call from one graph instance, and instances of the same call keep speeds of their own
// (results/nvidia-h200/graph_instance_modes.txt: two speeds 1.2-4.0% apart in blocks of four instantiations): two
// runtimes running one candidate on one call read 0.948-0.972x of each other in heldout_bench's stream/warm while both
// replayed every call (results/nvidia-h200/graph_draw_probe.txt). Keeping the faster of two instances needs a
// measure of each that a program's own calls give: an event pair around one replay, with other work queued before it.
// (It does tell them apart; a runtime draw of two instances by three such replays each did not make two runtimes
// agree, and is not in the runtime: the same file.)
//
// Per problem: a Runtime with no db resolves it (first-use trial included) on the warm buffers, then kInstances graphs
// of its call are captured (the runtime launches as before inside a capture). Per round, every instance in a rotating
// order, twice behind a 10 ms spin: a batch of kCalls back-to-back replays between two events (what the benchmarks
// read), and kCalls replays each between an event pair of its own (what the runtime could read). Printed per
// instance: the batch median, and the median and least single-replay time; then whether the single replays rank the
// instances as the batches do. Then four draws of two instances from one capture each (the first and the fourth
// instantiation after it), the ones between destroyed unused or uploaded first, timed alike, with the pick by the
// least single replay.
//
//   graph_draw_probe ROUNDS MxNxK:mode:epilogue...
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include "cuda/cuda_call.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/device_info.hpp"
#include "cuda/graph.hpp"
#include "cuda/stream.hpp"
#include "gemmtune/runtime.hpp"
#include "globaltimer_spin.cuh"
#include "instance_stats.hpp"
#include "probe_problem.hpp"
#include "launch/problem_buffers.hpp"

namespace gemmtune {
namespace {

constexpr int kInstances = 8;
constexpr int kCalls = 20;
constexpr std::int64_t kIdleNs = 10'000'000;

struct Timings {
  std::vector<double> batch_med, single_med, single_min;  // per instance, us per call
};

// Per round, every instance in a rotating order: a batch of kCalls replays between two events, then kCalls replays each
// between an event pair of its own, each behind a 10 ms spin.
Timings time_instances(const std::vector<CudaGraphExec>& instances, int rounds, cudaStream_t s) {
  DeviceBuffer<int> sink(1);
  const auto idle = [&] {
    spin_kernel<<<1, 32, 0, s>>>(kIdleNs, sink.get());
    GT_CUDA_CALL(cudaGetLastError());
  };
  const std::size_t n = instances.size();
  std::vector<CudaEvent> starts(kCalls), ends(kCalls);
  const CudaEvent start, stop;
  std::vector<std::vector<double>> batch(n), single(n);
  for (std::size_t r = 0; r <= static_cast<std::size_t>(rounds); ++r)
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t i = (r * 3 + j) % n;
      idle();
      start.record(s);
      for (int c = 0; c < kCalls; ++c) instances[i].launch(s);
      stop.record(s);
      idle();
      for (std::size_t c = 0; c < kCalls; ++c) {
        starts[c].record(s);
        instances[i].launch(s);
        ends[c].record(s);
      }
      GT_CUDA_CALL(cudaStreamSynchronize(s));
      if (r == 0) continue;  // the clocks may still be rising
      batch[i].push_back(1e3 * stop.elapsed_ms_since(start) / kCalls);
      for (std::size_t c = 0; c < kCalls; ++c) single[i].push_back(1e3 * ends[c].elapsed_ms_since(starts[c]));
    }
  Timings t;
  for (std::size_t i = 0; i < n; ++i) {
    t.batch_med.push_back(median(batch[i]));
    t.single_med.push_back(median(single[i]));
    t.single_min.push_back(*std::min_element(single[i].begin(), single[i].end()));
  }
  return t;
}

double spread(const std::vector<double>& v) {
  return *std::max_element(v.begin(), v.end()) / *std::min_element(v.begin(), v.end());
}

void probe(const GemmProblem& p, int rounds, std::size_t l2_bytes, void* workspace, std::size_t workspace_bytes) {
  const CudaStream stream;
  const cudaStream_t s = stream.get();
  RuntimeOptions options;
  options.workspace = workspace;
  options.workspace_bytes = workspace_bytes;
  const std::string db = "/tmp/graph_draw_probe_" + std::to_string(::getpid()) + ".db";  // its misses only
  std::optional<Runtime> held(std::in_place, db, 0, options);
  Runtime& rt = *held;
  const ProblemBuffers buffers(p, l2_bytes, 1234, s);
  const GemmOperands x = buffers.operands(0);
  rt.forward(p, x, s);
  GT_CUDA_CALL(cudaStreamSynchronize(s));
  const auto ready = [&](CudaGraphExec& g) {
    g.upload(s);
    g.launch(s);
    GT_CUDA_CALL(cudaStreamSynchronize(s));
  };
  // Eight captures, one instance each.
  std::vector<CudaGraphExec> captures;
  for (int i = 0; i < kInstances; ++i) {
    captures.push_back(CudaGraphExec::capture(s, [&] { rt.forward(p, x, s); }));
    ready(captures.back());
  }
  const Timings t = time_instances(captures, rounds, s);
  std::printf("%ldx%ldx%ld %s %s (%s)\n  eight captures: batch %.3f us per call, spread %.4f; single replay median "
              "%.3f us, spread %.4f, rank corr with batch %+.2f (least %+.2f)\n",
              p.m, p.n, p.k, to_string(p.mode), p.epi.key().c_str(), rt.candidate_id(p).c_str(), median(t.batch_med),
              spread(t.batch_med), median(t.single_med), spread(t.single_med),
              rank_correlation(t.batch_med, t.single_med), rank_correlation(t.batch_med, t.single_min));
  for (int i = 0; i < kInstances; ++i)
    std::printf("    instance %d: batch %.3f  single median %.3f  least %.3f\n", i, t.batch_med[i], t.single_med[i],
                t.single_min[i]);
  // Four draws of two instances: one capture, instances 0 and kRivalAfter of kRivalAfter + 1 consecutive
  // instantiations kept, the others destroyed, uploaded first or never.
  constexpr int kRivalAfter = 4;
  for (const bool upload_all : {false, true}) {
    std::vector<CudaGraphExec> pairs;
    double instantiate_us = 0;
    for (int d = 0; d < kInstances / 2; ++d) {
      CudaGraphExec first = CudaGraphExec::capture(s, [&] { rt.forward(p, x, s); });
      const auto t0 = std::chrono::steady_clock::now();
      if (upload_all) first.upload(s);
      std::vector<CudaGraphExec> more;
      for (int i = 0; i < kRivalAfter; ++i) {
        more.push_back(first.instantiate_again());
        if (upload_all) more.back().upload(s);
      }
      instantiate_us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      pairs.push_back(std::move(first));
      pairs.push_back(std::move(more.back()));
      more.clear();
      ready(pairs[pairs.size() - 2]);
      ready(pairs.back());
    }
    const Timings u = time_instances(pairs, rounds, s);
    std::printf("  four draws, %s (%d instantiations again: %.1f us each): batch %.3f us per call\n",
                upload_all ? "all uploaded" : "kept ones uploaded", kRivalAfter,
                instantiate_us / (kInstances / 2 * kRivalAfter), median(u.batch_med));
    for (std::size_t d = 0; d < pairs.size(); d += 2) {
      const bool batch_faster_rival = u.batch_med[d + 1] < u.batch_med[d];
      const bool least_picks_rival = u.single_min[d + 1] < u.single_min[d];
      const double kept = least_picks_rival ? u.batch_med[d + 1] : u.batch_med[d];
      std::printf("    draw %zu: batch %.3f / %.3f  single least %.3f / %.3f  -> keeps %s (%s), %.4f of the first\n",
                  d / 2, u.batch_med[d], u.batch_med[d + 1], u.single_min[d], u.single_min[d + 1],
                  least_picks_rival ? "rival" : "first",
                  least_picks_rival == batch_faster_rival ? "the faster" : "the slower", kept / u.batch_med[d]);
    }
  }
  std::fflush(stdout);
  captures.clear();
  held.reset();
  std::remove(db.c_str());
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 0;
  if (rounds < 4 || rounds > 1000 || argc < 3) {
    std::fprintf(stderr, "usage: graph_draw_probe ROUNDS(4-1000) MxNxK:mode:epilogue...\n");
    return 2;
  }
  try {
    const gemmtune::DeviceInfo device = gemmtune::query_device(0);
    gemmtune::DeviceBuffer<unsigned char> workspace(std::size_t{64} << 20);
    for (int a = 2; a < argc; ++a) {
      const gemmtune::GemmProblem p = gemmtune::parse_probe_problem(argv[a]);
      gemmtune::probe(p, rounds, device.l2_bytes, workspace.get(), workspace.size());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "graph_draw_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
