// Developer timing loop for our kernel variants beside cuBLASLt, for tuning iterations on the GPU machine. The official
// numbers come from `gemmtune sweep` (CUPTI timing, noise-based stopping); this is the quick look: CUDA events around
// 20 back-to-back calls rotating over 4 input sets (more than L2 at large shapes), median of 7 batches.
//
//   bench_own_kernels [MODE ...] [N ...]     modes fp32, tf32, 3xtf32 (default all three); square shapes N³ (default
//                                            256 512 1024 2048 4096)
//
// Per shape: every own variant and cuBLASLt's heuristic top 8 in fp32 and tf32 (no epilogue), 3xtf32 own variants,
// and at N ≤ 1024 the fused bias+gelu (own, fp32 and tf32) against cuBLASLt GEMM + our separate bias+gelu kernel.
// Where a mode has several own families (tf32: mma.sync and wgmma), the summary also gives each family's best.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "cuda/device_buffer.hpp"
#include "cuda/stream.hpp"
#include "kernels/reference_gemm.hpp"
#include "kernels/registry.hpp"
#include "kernels/launch_scratch.hpp"
#include "lt/lt_gemm.hpp"
#include "lt/lt_handles.hpp"

namespace gemmtune {
namespace {

constexpr int kInputSets = 4;
constexpr int kCallsPerBatch = 20;
constexpr int kBatches = 7;
constexpr std::size_t kWorkspaceBytes = std::size_t{64} << 20;

// Inputs filled on the host once per shape: random, never zero.
struct Inputs {
  std::vector<DeviceBuffer<float>> a, b;
  DeviceBuffer<float> bias, y, z;

  Inputs(std::int64_t n, unsigned seed) : bias(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n * n)) {
    std::vector<float> host(static_cast<std::size_t>(n * n));
    for (int s = 0; s < kInputSets; ++s) {
      for (DeviceBuffer<float>* target : {&a.emplace_back(host.size()), &b.emplace_back(host.size())}) {
        for (float& v : host) {
          seed = seed * 1664525u + 1013904223u;
          v = static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
        }
        GT_CUDA_CALL(cudaMemcpy(target->get(), host.data(), target->bytes(), cudaMemcpyHostToDevice));
      }
    }
    GT_CUDA_CALL(cudaMemcpy(bias.get(), host.data(), bias.bytes(), cudaMemcpyHostToDevice));
  }

  GemmOperands operands(int set) const {
    GemmOperands x;
    x.A = a[static_cast<std::size_t>(set)].get();
    x.B = b[static_cast<std::size_t>(set)].get();
    x.bias = bias.get();
    x.Y = y.get();
    return x;
  }
};

template <class Launch>
double median_us_per_call(Launch&& launch, cudaStream_t s) {
  for (int set = 0; set < kInputSets; ++set) launch(set);  // warm-up: attributes, caches, clocks
  CudaEvent start, stop;
  std::vector<double> batches;
  for (int b = 0; b < kBatches; ++b) {
    start.record(s);
    for (int call = 0; call < kCallsPerBatch; ++call) launch(call % kInputSets);
    stop.record(s);
    GT_CUDA_CALL(cudaEventSynchronize(stop.get()));
    batches.push_back(1000.0 * stop.elapsed_ms_since(start) / kCallsPerBatch);
  }
  std::sort(batches.begin(), batches.end());
  return batches[batches.size() / 2];
}

double verify(const GemmProblem& p, const GemmOperands& x, cudaStream_t s) {
  DeviceBuffer<double> ref(static_cast<std::size_t>(p.m * p.n));
  kernels::reference_gemm(p, x, ref.get(), nullptr, s);
  return kernels::relative_frobenius_error(x.Y, ref.get(), p.m * p.n, s);
}

struct Best {
  std::string name;
  double us = 1e30;
  double first_us = 0.0;  // cuBLASLt: the heuristic's first choice
  void offer(const std::string& n, double t) {
    if (t < us) {
      us = t;
      name = n;
    }
  }
};

struct OwnBests {
  Best overall;
  std::vector<std::pair<kernels::Family, Best>> by_family;  // registry order

  void offer(kernels::Family family, const std::string& name, double us) {
    overall.offer(name, us);
    const auto same = [&](const auto& entry) { return entry.first == family; };
    auto it = std::find_if(by_family.begin(), by_family.end(), same);
    if (it == by_family.end()) it = by_family.insert(by_family.end(), {family, Best{}});
    it->second.offer(name, us);
  }
};

OwnBests bench_own(const GemmProblem& p, const Inputs& in, cudaStream_t s) {
  OwnBests best;
  for (const kernels::KernelVariant& v : kernels::kernel_registry()) {
    if (!v.unsupported_reason(p).empty()) continue;
    const kernels::LaunchScratchBuffer scratch(v, p);
    const double us = median_us_per_call([&](int set) { v.launch(p, in.operands(set), scratch.view(), s); }, s);
    v.launch(p, in.operands(0), scratch.view(), s);  // the timed calls left another input set's product in Y
    const double err = verify(p, in.operands(0), s);
    std::printf("  own %-34s %10.1f us %7.1f TFLOP/s  err %.2e\n", v.name.c_str(), us, p.flops() / us * 1e-6, err);
    best.offer(v.family, v.name, us);
  }
  return best;
}

Best bench_lt(const GemmProblem& p, const Inputs& in, cudaStream_t s, cublasLtHandle_t handle, LtEpilogueMode mode) {
  Best best;
  const LtGemm gemm(handle, p, mode);
  DeviceBuffer<unsigned char> workspace(kWorkspaceBytes);
  for (const Candidate& c : gemm.heuristic(8, kWorkspaceBytes)) {
    const cublasLtMatmulAlgo_t algo = gemm.make_algo(c.lt);
    if (!gemm.check(algo, kWorkspaceBytes, nullptr).empty()) continue;
    const double us = median_us_per_call(
        [&](int set) { gemm.run(algo, in.operands(set), workspace.get(), workspace.bytes(), s); }, s);
    std::printf("  lt  %-34s %10.1f us %7.1f TFLOP/s\n", c.id().c_str(), us, p.flops() / us * 1e-6);
    if (c.heuristic_rank == 0) best.first_us = us;
    best.offer(c.id(), us);
  }
  return best;
}

GemmProblem square(std::int64_t n, MathMode mode) {
  GemmProblem p;
  p.m = p.n = p.k = n;
  p.mode = mode;
  return p;
}

void run(const std::vector<MathMode>& modes, const std::vector<std::int64_t>& sizes) {
  const auto wanted = [&](MathMode m) { return std::find(modes.begin(), modes.end(), m) != modes.end(); };
  CudaStream stream;
  const LtHandle handle = make_lt_handle();
  std::vector<std::string> summary;
  char line[256];
  for (std::int64_t n : sizes) {
    const Inputs in(n, static_cast<unsigned>(n));
    for (MathMode mode : {MathMode::Fp32, MathMode::Tf32, MathMode::Tf32x3}) {
      if (!wanted(mode)) continue;
      const GemmProblem p = square(n, mode);
      std::printf("%s\n", p.key().c_str());
      const OwnBests bests = bench_own(p, in, stream.get());
      const Best& own = bests.overall;
      const GemmProblem lt_problem = square(n, mode == MathMode::Tf32x3 ? MathMode::Fp32 : mode);
      const Best lt = bench_lt(lt_problem, in, stream.get(), handle.get(), LtEpilogueMode::PreferFused);
      std::snprintf(line, sizeof line, "%5lld %-7s own %-34s %9.1f us | lt %s best %9.1f first %9.1f | own/lt %.2fx",
                    static_cast<long long>(n), to_string(mode), own.name.c_str(), own.us,
                    mode == MathMode::Tf32x3 ? "fp32" : to_string(mode), lt.us, lt.first_us, lt.us / own.us);
      summary.emplace_back(line);
      if (bests.by_family.size() < 2) continue;
      for (const auto& [family, best] : bests.by_family) {
        std::snprintf(line, sizeof line, "%5s %-7s   %-12s best %-34s %9.1f us | own/lt %.2fx", "", "",
                      kernels::to_string(family), best.name.c_str(), best.us, lt.us / best.us);
        summary.emplace_back(line);
      }
    }
    for (MathMode mode : {MathMode::Fp32, MathMode::Tf32}) {
      if (n > 1024) break;
      if (!wanted(mode)) continue;
      GemmProblem p = square(n, mode);
      p.epi.bias = true;
      p.epi.act = Activation::Gelu;
      std::printf("%s\n", p.key().c_str());
      const Best own = bench_own(p, in, stream.get()).overall;
      const Best lt = bench_lt(p, in, stream.get(), handle.get(), LtEpilogueMode::Unfused);
      std::snprintf(line, sizeof line, "%5lld %-7s bias+gelu own %-29s %9.1f us | lt + epilogue kernel %9.1f | "
                    "own/lt %.2fx", static_cast<long long>(n), to_string(mode), own.name.c_str(), own.us, lt.us,
                    lt.us / own.us);
      summary.emplace_back(line);
    }
  }
  std::printf("\nsummary (own/lt = speed of own relative to cuBLASLt best; > 1 means own is faster)\n");
  for (const std::string& s : summary) std::printf("%s\n", s.c_str());
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  std::vector<gemmtune::MathMode> modes;
  std::vector<std::int64_t> sizes;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg.find_first_not_of("0123456789") == std::string::npos)
        sizes.push_back(std::atoll(argv[i]));
      else
        modes.push_back(gemmtune::parse_math_mode(arg));
    }
    if (sizes.empty()) sizes = {256, 512, 1024, 2048, 4096};
    if (modes.empty()) modes = {gemmtune::MathMode::Fp32, gemmtune::MathMode::Tf32, gemmtune::MathMode::Tf32x3};
    gemmtune::run(modes, sizes);
  } catch (const gemmtune::Error& e) {
    std::fprintf(stderr, "bench_own_kernels: %s\n", e.what());
    return static_cast<int>(e.code());
  }
  return 0;
}
