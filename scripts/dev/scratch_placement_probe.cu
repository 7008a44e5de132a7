// scratch_placement_probe: does a split-k kernel's speed follow where its tickets and partials lie?
//
// Two runtimes ran one skinny split-k candidate 3-4% apart at 8x64x1216 fp32 bias+gelu in heldout_bench's graph/warm,
// in all four processes, and eight captures of one runtime's call, each with scratch of its own, spread 3.0-7.7%
// (results/nvidia-h200/graph_draw_probe.txt). A split's slices meet through tickets and partials: a chain of L2 round
// trips that a few-microsecond call waits on. Here one variant's launches, on fixed operands, take their scratch from
// one 64 MiB allocation at offsets that move one thing at a time:
//   partials  every 1 MiB over 16 MiB, tickets fixed;
//   tickets   every 256 bytes over 4 KiB (a cache line each), partials fixed;
//   tickets   every 64 KiB over 1 MiB, partials fixed.
// Per round, every placement in a rotating order, one batch of kCalls back-to-back launches behind a 10 ms spin,
// CUDA events around it. Printed per set: each placement's median us per call over the set's median, the spread
// (slowest / fastest) and whether the two halves of the rounds rank the placements alike (rank correlation).
//
//   scratch_placement_probe ROUNDS VARIANT:MxNxK:mode:epilogue...
//   e.g. scratch_placement_probe 21 skinny_fp32_8x64x64_s4:8x64x1216:fp32:bias+gelu
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "cuda/cuda_call.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/device_info.hpp"
#include "cuda/stream.hpp"
#include "globaltimer_spin.cuh"
#include "instance_stats.hpp"
#include "probe_problem.hpp"
#include "kernels/launch_scratch.hpp"
#include "kernels/registry.hpp"
#include "launch/problem_buffers.hpp"

namespace gemmtune {
namespace {

constexpr int kCalls = 20;
constexpr std::int64_t kIdleNs = 10'000'000;
constexpr std::size_t kPool = std::size_t{64} << 20;
constexpr std::size_t kTicketsAt = std::size_t{48} << 20;  // past every partials placement

struct Case {
  const kernels::KernelVariant* variant = nullptr;
  GemmProblem problem;
  std::string text;
};

Case parse_case(const std::string& text) {
  Case c;
  c.text = text;
  const auto c0 = text.find(':');
  if (c0 == std::string::npos) throw InputError("expected VARIANT:MxNxK:mode:epilogue, got '" + text + "'");
  c.variant = kernels::find_kernel_variant(text.substr(0, c0));
  if (!c.variant) throw InputError("no variant '" + text.substr(0, c0) + "' in the registry");
  c.problem = parse_probe_problem(text.substr(c0 + 1));
  const GemmProblem& p = c.problem;
  const std::string why = c.variant->unsupported_reason(p);
  if (!why.empty()) throw InputError(text + ": " + why);
  if (c.variant->split_k_tickets(p) == 0) throw InputError(text + ": the variant runs this problem unsplit");
  return c;
}

struct Placement {
  std::size_t partials_at, tickets_at;  // byte offsets into the pool
};

void probe(const Case& c, int rounds, std::size_t l2_bytes) {
  const CudaStream stream;
  const cudaStream_t s = stream.get();
  const GemmProblem& p = c.problem;
  const ProblemBuffers buffers(p, l2_bytes, 4321, s);
  const GemmOperands x = buffers.operands(0);
  DeviceBuffer<unsigned char> pool(kPool);
  GT_CUDA_CALL(cudaMemsetAsync(pool.get(), 0, pool.size(), s));  // tickets start at zero; kernels leave them so
  std::vector<std::pair<std::string, std::vector<Placement>>> sets(3);
  sets[0].first = "partials every 1 MiB";
  sets[1].first = "tickets every 256 B";
  sets[2].first = "tickets every 64 KiB";
  for (std::size_t i = 0; i < 16; ++i) {
    sets[0].second.push_back({i << 20, kTicketsAt});
    sets[1].second.push_back({0, kTicketsAt + i * 256});
    sets[2].second.push_back({0, kTicketsAt + (i << 16)});
  }
  std::vector<std::pair<std::size_t, std::size_t>> units;  // (set, placement)
  for (std::size_t set = 0; set < sets.size(); ++set)
    for (std::size_t i = 0; i < sets[set].second.size(); ++i) units.emplace_back(set, i);
  const auto scratch_at = [&](const Placement& at) {
    return kernels::place_launch_scratch(*c.variant, p, reinterpret_cast<float*>(pool.get() + at.partials_at),
                                         reinterpret_cast<unsigned*>(pool.get() + at.tickets_at));
  };
  DeviceBuffer<int> sink(1);
  const CudaEvent start, stop;
  std::vector<std::vector<std::vector<double>>> us(sets.size());
  for (std::size_t set = 0; set < sets.size(); ++set) us[set].resize(sets[set].second.size());
  for (int r = 0; r <= rounds; ++r)
    for (std::size_t j = 0; j < units.size(); ++j) {
      const auto& [set, i] = units[(static_cast<std::size_t>(r) * 7 + j) % units.size()];
      const kernels::LaunchScratch scratch = scratch_at(sets[set].second[i]);
      spin_kernel<<<1, 32, 0, s>>>(kIdleNs, sink.get());
      GT_CUDA_CALL(cudaGetLastError());
      start.record(s);
      for (int call = 0; call < kCalls; ++call) c.variant->launch(p, x, scratch, s);
      stop.record(s);
      GT_CUDA_CALL(cudaStreamSynchronize(s));
      if (r > 0) us[set][i].push_back(1e3 * stop.elapsed_ms_since(start) / kCalls);  // round 0: clocks, caches
    }
  std::printf("%s: %zu partial floats, %zu tickets\n", c.text.c_str(), c.variant->split_k_partial_floats(p),
              c.variant->split_k_tickets(p));
  for (std::size_t set = 0; set < sets.size(); ++set) {
    std::vector<double> med, first, second;
    for (const std::vector<double>& t : us[set]) {
      med.push_back(median(t));
      const auto mid = t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2);
      first.push_back(median({t.begin(), mid}));
      second.push_back(median({mid, t.end()}));
    }
    const double centre = median(med);
    std::printf("  %-22s %.3f us per call, spread %.4f, halves rank corr %+.2f:", sets[set].first.c_str(), centre,
                *std::max_element(med.begin(), med.end()) / *std::min_element(med.begin(), med.end()),
                rank_correlation(first, second));
    for (const double m : med) std::printf(" %.3f", m / centre);
    std::printf("\n");
  }
  std::fflush(stdout);
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 0;
  if (rounds < 4 || rounds > 1000 || argc < 3) {
    std::fprintf(stderr, "usage: scratch_placement_probe ROUNDS(4-1000) VARIANT:MxNxK:mode:epilogue...\n");
    return 2;
  }
  try {
    const gemmtune::DeviceInfo device = gemmtune::query_device(0);
    for (int a = 2; a < argc; ++a) gemmtune::probe(gemmtune::parse_case(argv[a]), rounds, device.l2_bytes);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scratch_placement_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
