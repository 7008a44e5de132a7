// graph_instance_modes: does a CUDA graph instance of a short call keep a speed of its own, and does anything in how it
// is built or instantiated decide which?
//
// PyTorch's own one-call graphs of addmm + gelu, replayed 20 times a batch as gemmtune's runtime replays a repeated
// call, ran up to 3.7% apart per instance on the same tensors, each steadily so, while one-kernel graphs agreed
// (results/nvidia-h200/graph_instance_probe.txt). Here the kernels are ours and known: spin kernels whose length is
// wall-clock time (%globaltimer), so a difference between instances is launch and dependency overhead alone, and a
// pair that reads and writes memory as a small GEMM and its epilogue do.
//
// Per variant, kInstances graphs of the same launches; per round, every instance of every variant in a rotating
// order, each one batch of kCalls back-to-back cudaGraphLaunch behind a 10 ms spin, CUDA events around the batch.
// Printed per variant: the median us per call, the spread of the instances' medians (slowest / fastest), whether an
// instance's offset holds between the two halves of the rounds (rank correlation), and each instance's median over
// the variant's.
//
//   graph_instance_modes [rounds]
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "cuda/cuda_call.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/graph.hpp"
#include "cuda/stream.hpp"
#include "globaltimer_spin.cuh"
#include "instance_stats.hpp"

namespace gemmtune {
namespace {

constexpr int kInstances = 8;
constexpr int kCalls = 20;
constexpr std::int64_t kIdleNs = 10'000'000;  // the spin before each batch, as the benchmarks hold the GPU idle
constexpr int kSpinBlocks = 132;               // a full-GPU launch, like a GEMM's

// A small GEMM's traffic: every block reads a 32 KiB panel of `in` and writes its share of `out`.
__global__ void panel_kernel(const float* in, float* out, int panel, int out_per_block) {
  float acc = 0.f;
  const float* p = in + static_cast<std::size_t>(blockIdx.x % 16) * panel;
  for (int i = threadIdx.x; i < panel; i += blockDim.x) acc += p[i];
  for (int i = threadIdx.x; i < out_per_block; i += blockDim.x)
    out[static_cast<std::size_t>(blockIdx.x) * out_per_block + i] = acc + static_cast<float>(i);
}

// An epilogue's traffic: y = tanh(y) elementwise.
__global__ void elementwise_kernel(float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = tanhf(y[i]);
}

enum class Build { kCapture, kCaptureUpload, kCapturePriority };

CudaGraphExec capture(cudaStream_t s, const std::function<void()>& enqueue, Build build) {
  CudaGraphExec out = CudaGraphExec::capture(
      s, enqueue, build == Build::kCapturePriority ? cudaGraphInstantiateFlagUseNodePriority : 0);
  if (build == Build::kCaptureUpload) out.upload(s);
  GT_CUDA_CALL(cudaStreamSynchronize(s));
  return out;
}

struct Variant {
  std::string name;
  std::vector<CudaGraphExec> instances;
  std::vector<std::vector<double>> us;  // per instance, per timed round: us per call
};

void run(int rounds) {
  const CudaStream stream;
  const cudaStream_t s = stream.get();
  DeviceBuffer<int> sink(1);
  constexpr int kPanel = 8192, kOutPerBlock = 1024;
  DeviceBuffer<float> in(16 * kPanel), out(static_cast<std::size_t>(kSpinBlocks) * kOutPerBlock);
  GT_CUDA_CALL(cudaMemsetAsync(in.get(), 0, in.size() * sizeof(float), s));
  GT_CUDA_CALL(cudaMemsetAsync(out.get(), 0, out.size() * sizeof(float), s));
  const int n_out = static_cast<int>(out.size());

  const auto spin = [&](std::int64_t ns) { spin_kernel<<<kSpinBlocks, 32, 0, s>>>(ns, sink.get()); };
  const auto spin_pair = [&] {
    spin(2500);
    spin(1500);
    GT_CUDA_CALL(cudaGetLastError());
  };
  const auto spin_one = [&] {
    spin(4000);
    GT_CUDA_CALL(cudaGetLastError());
  };
  const auto memory_pair = [&] {
    panel_kernel<<<kSpinBlocks, 256, 0, s>>>(in.get(), out.get(), kPanel, kOutPerBlock);
    elementwise_kernel<<<(n_out + 255) / 256, 256, 0, s>>>(out.get(), n_out);
    GT_CUDA_CALL(cudaGetLastError());
  };
  const auto memory_one = [&] {
    panel_kernel<<<kSpinBlocks, 256, 0, s>>>(in.get(), out.get(), kPanel, kOutPerBlock);
    GT_CUDA_CALL(cudaGetLastError());
  };
  struct Spec {
    const char* name;
    std::function<void()> enqueue;
    Build build;
  };
  const Spec specs[] = {
      {"spin 2.5+1.5 us, two kernels", spin_pair, Build::kCapture},
      {"spin 2.5+1.5 us, two kernels, uploaded", spin_pair, Build::kCaptureUpload},
      {"spin 2.5+1.5 us, two kernels, node priority", spin_pair, Build::kCapturePriority},
      {"spin 4 us, one kernel", spin_one, Build::kCapture},
      {"panel + elementwise, two kernels", memory_pair, Build::kCapture},
      {"panel + elementwise, two kernels, uploaded", memory_pair, Build::kCaptureUpload},
      {"panel, one kernel", memory_one, Build::kCapture},
  };
  std::vector<Variant> variants;
  for (const Spec& spec : specs) {
    spec.enqueue();  // loads the kernels outside any capture
    GT_CUDA_CALL(cudaStreamSynchronize(s));
    Variant v;
    v.name = spec.name;
    for (int i = 0; i < kInstances; ++i) v.instances.push_back(capture(s, spec.enqueue, spec.build));
    v.us.resize(kInstances);
    variants.push_back(std::move(v));
  }
  std::vector<std::pair<std::size_t, int>> units;
  for (std::size_t v = 0; v < variants.size(); ++v)
    for (int i = 0; i < kInstances; ++i) units.emplace_back(v, i);
  for (const auto& [v, i] : units) {  // a graph's first launch uploads it where instantiation did not
    variants[v].instances[static_cast<std::size_t>(i)].launch(s);
    GT_CUDA_CALL(cudaStreamSynchronize(s));
  }
  const CudaEvent start, stop;
  for (int r = 0; r <= rounds; ++r)
    for (std::size_t j = 0; j < units.size(); ++j) {
      const auto& [v, i] = units[(static_cast<std::size_t>(r) * 5 + j) % units.size()];
      spin_kernel<<<1, 32, 0, s>>>(kIdleNs, sink.get());
      GT_CUDA_CALL(cudaGetLastError());
      start.record(s);
      for (int c = 0; c < kCalls; ++c)
        variants[v].instances[static_cast<std::size_t>(i)].launch(s);
      stop.record(s);
      GT_CUDA_CALL(cudaStreamSynchronize(s));
      if (r) variants[v].us[static_cast<std::size_t>(i)].push_back(1e3 * stop.elapsed_ms_since(start) / kCalls);
    }
  std::printf("# %d instances per variant, %d launches a batch, %d rounds\n", kInstances, kCalls, rounds);
  for (const Variant& v : variants) {
    std::vector<double> med, first, second;
    for (const std::vector<double>& t : v.us) {
      med.push_back(median(t));
      const auto mid = t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2);
      first.push_back(median({t.begin(), mid}));
      second.push_back(median({mid, t.end()}));
    }
    const double centre = median(med);
    std::printf("%s: %.3f us per call, spread %.4f, halves rank corr %+.2f:", v.name.c_str(), centre,
                *std::max_element(med.begin(), med.end()) / *std::min_element(med.begin(), med.end()),
                rank_correlation(first, second));
    for (const double m : med) std::printf(" %.4f", m / centre);
    std::printf("\n");
  }
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 31;
  if (rounds < 4 || rounds > 1000) {
    std::fprintf(stderr, "graph_instance_modes: rounds must be 4-1000\n");
    return 2;
  }
  try {
    gemmtune::run(rounds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "graph_instance_modes: %s\n", e.what());
    return 1;
  }
  return 0;
}
