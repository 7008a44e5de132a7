// mlp_step: one training step of a two-layer MLP through gemmtune::Runtime, captured in a CUDA graph and replayed.
//
//   H = dropout(gelu(X·W1 + b1))   (Z1 kept for the backward)
//   Y = H·W2 + b2,  loss = ½‖Y − T‖²,  gY = Y − T
//   backward of layer 2: gH, gW2, gb2;  backward of layer 1: gW1, gb1 (gX is not needed)
//
// Layer 1's dropout offset lives in device memory: the captured step reads it when it runs and advances it at its end
// (Runtime::advance_offset), so replay i draws the mask of offset i − 1. The step runs once eagerly (which resolves
// every GEMM it uses) and is captured into a graph; replays 1..3 must equal, bit for bit, eager steps given offsets
// 0..2 by value, and draw three different masks (exit 1 otherwise); then both are timed. Only the public header is
// used.
//
//   mlp_step [DB] [BATCH D_IN HIDDEN D_OUT]      (defaults: the default db, 512 1024 4096 1024)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "gemmtune/runtime.hpp"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "mlp_step: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// A device array that frees itself.
struct Tensor {
  explicit Tensor(std::size_t n) : count(n) { check(cudaMalloc(&data, n * sizeof(float)), "cudaMalloc"); }
  ~Tensor() { cudaFree(data); }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  std::vector<float> host() const {
    std::vector<float> h(count);
    check(cudaMemcpy(h.data(), data, count * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return h;
  }
  float* data = nullptr;
  std::size_t count;
};

__global__ void fill_kernel(float* p, std::size_t n, unsigned seed, float scale) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    p[i] = scale * (static_cast<float>(h >> 8) / 16777216.0f * 2.0f - 1.0f);
  }
}

__global__ void loss_grad_kernel(const float* y, const float* target, float* gy, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    gy[i] = y[i] - target[i];
}

void fill(Tensor& t, unsigned seed, float scale) {
  fill_kernel<<<256, 256>>>(t.data, t.count, seed, scale);
  check(cudaGetLastError(), "fill");
}

gemmtune::GemmProblem layer(std::int64_t m, std::int64_t n, std::int64_t k, gemmtune::Activation act, float dropout) {
  gemmtune::GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.epi.bias = true;
  p.epi.act = act;
  p.epi.save_z = act != gemmtune::Activation::None;
  p.epi.dropout_p = dropout;
  p.mode = gemmtune::MathMode::Tf32;
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t batch = argc > 5 ? std::atoll(argv[2]) : 512, d_in = argc > 5 ? std::atoll(argv[3]) : 1024,
                     hidden = argc > 5 ? std::atoll(argv[4]) : 4096, d_out = argc > 5 ? std::atoll(argv[5]) : 1024;
  try {
    // The db named first, else the default one that the CLI's sweep --from-misses tunes (gemmtune paths).
    gemmtune::Runtime rt = argc > 1 ? gemmtune::Runtime(argv[1]) : gemmtune::Runtime();
    const gemmtune::GemmProblem l1 = layer(batch, hidden, d_in, gemmtune::Activation::Gelu, 0.1f);
    const gemmtune::GemmProblem l2 = layer(batch, d_out, hidden, gemmtune::Activation::None, 0.0f);
    const auto sz = [](std::int64_t a, std::int64_t b) { return static_cast<std::size_t>(a * b); };

    Tensor x(sz(batch, d_in)), w1(sz(d_in, hidden)), b1(sz(1, hidden)), w2(sz(hidden, d_out)), b2(sz(1, d_out)),
        target(sz(batch, d_out));
    Tensor z1(sz(batch, hidden)), h(sz(batch, hidden)), y(sz(batch, d_out)), gy(sz(batch, d_out));
    Tensor gh(sz(batch, hidden)), gw1(sz(d_in, hidden)), gb1(sz(1, hidden)), gw2(sz(hidden, d_out)), gb2(sz(1, d_out));
    fill(x, 1, 1.0f);
    fill(w1, 2, 1.0f / std::sqrt(static_cast<float>(d_in)));
    fill(b1, 3, 0.1f);
    fill(w2, 4, 1.0f / std::sqrt(static_cast<float>(hidden)));
    fill(b2, 5, 0.1f);
    fill(target, 6, 1.0f);
    check(cudaDeviceSynchronize(), "fill");  // the fills ran on the legacy stream, which s below does not wait for

    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    // Layer 1's dropout counter in device memory: the captured step reads it when it runs and advances it at its end,
    // so every replay draws a new mask (a graph that captured the offset by value would replay one mask forever).
    std::uint64_t* step_offset = nullptr;
    check(cudaMalloc(&step_offset, sizeof(std::uint64_t)), "cudaMalloc");
    check(cudaMemsetAsync(step_offset, 0, sizeof(std::uint64_t), s), "cudaMemset");
    const std::uint64_t seed = 2024;
    // One step with layer 1's dropout offset by value, or (offset_ptr non-null) read from the device. The forward and
    // the backward take the same offset, so the backward regenerates the forward's mask.
    const auto step = [&](std::uint64_t offset, const std::uint64_t* offset_ptr) {
      gemmtune::GemmOperands f1;
      f1.A = x.data;
      f1.B = w1.data;
      f1.bias = b1.data;
      f1.Y = h.data;
      f1.Z = z1.data;
      f1.seed = seed;
      f1.offset = offset;
      f1.offset_ptr = offset_ptr;
      rt.forward(l1, f1, s);
      rt.forward(l2, h.data, w2.data, b2.data, y.data, nullptr, s);
      loss_grad_kernel<<<256, 256, 0, s>>>(y.data, target.data, gy.data, gy.count);
      rt.backward(l2, h.data, w2.data, nullptr, gy.data, gh.data, gw2.data, gb2.data, s);
      gemmtune::BackwardOperands g1;
      g1.A = x.data;
      g1.B = w1.data;
      g1.Z = z1.data;
      g1.gY = gh.data;
      g1.gB = gw1.data;
      g1.gBias = gb1.data;
      g1.seed = seed;
      g1.offset = offset;
      g1.offset_ptr = offset_ptr;
      rt.backward(l1, g1, s);
    };
    const std::vector<const Tensor*> outputs = {&h, &y, &gh, &gw1, &gb1, &gw2, &gb2};
    const char* names[] = {"H", "Y", "gH", "gW1", "gb1", "gW2", "gb2"};
    const auto read_outputs = [&] {
      check(cudaStreamSynchronize(s), "step");
      std::vector<std::vector<float>> host;
      for (const Tensor* t : outputs) host.push_back(t->host());
      return host;
    };
    const auto poison_outputs = [&] {
      for (const Tensor* t : outputs) check(cudaMemsetAsync(t->data, 0xFF, t->count * sizeof(float), s), "poison");
    };

    step(0, nullptr);  // eager; resolves every problem of the step (the graph then contains only launches)
    check(cudaStreamSynchronize(s), "eager step");
    std::printf("%s\n%s\n%s\n%s\n", rt.explain(l1).c_str(), rt.explain(l2).c_str(), rt.explain_backward(l1).c_str(),
                rt.explain_backward(l2).c_str());

    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    check(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), "begin capture");
    step(0, step_offset);
    gemmtune::Runtime::advance_offset(step_offset, 1, s);
    check(cudaStreamEndCapture(s, &graph), "end capture");
    check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");

    // Replays 1..N, then eager steps with offsets 0..N-1 by value: replay i must equal eager step i-1, bit for bit.
    constexpr int kReplays = 3;
    std::vector<std::vector<std::vector<float>>> replays;
    for (int i = 0; i < kReplays; ++i) {
      poison_outputs();
      check(cudaGraphLaunch(exec, s), "replay");
      replays.push_back(read_outputs());
    }
    std::uint64_t counter = 0;
    check(cudaMemcpy(&counter, step_offset, sizeof(counter), cudaMemcpyDeviceToHost), "read the counter");
    bool ok = counter == kReplays;
    std::printf("dropout counter after %d replays: %llu (%s)\n", kReplays, static_cast<unsigned long long>(counter),
                ok ? "as advanced by the graph" : "WRONG");
    for (int i = 0; i < kReplays; ++i) {
      poison_outputs();
      step(static_cast<std::uint64_t>(i), nullptr);
      const std::vector<std::vector<float>> eager = read_outputs();
      const std::vector<std::vector<float>>& replay = replays[static_cast<std::size_t>(i)];
      std::string differing;
      for (std::size_t o = 0; o < outputs.size(); ++o)
        if (std::memcmp(replay[o].data(), eager[o].data(), replay[o].size() * sizeof(float)) != 0)
          differing += std::string(" ") + names[o];
      ok = ok && differing.empty();
      std::printf("replay %d vs eager step at offset %d: %s%s\n", i + 1, i,
                  differing.empty() ? "all 7 outputs bitwise identical" : "DIFFER in", differing.c_str());
    }
    // H = dropout(gelu(Z1)) is 0 where an element was dropped: each replay must have drawn its own mask.
    for (int i = 0; i + 1 < kReplays; ++i) {
      const std::vector<float>& a = replays[static_cast<std::size_t>(i)][0];
      const std::vector<float>& b = replays[static_cast<std::size_t>(i) + 1][0];
      std::size_t changed = 0;
      for (std::size_t j = 0; j < a.size(); ++j) changed += (a[j] == 0.f) != (b[j] == 0.f);
      ok = ok && changed > 0;
      std::printf("dropout mask, replay %d vs %d: %zu of %zu elements differ (%.1f%%)\n", i + 1, i + 2, changed,
                  a.size(), 100.0 * static_cast<double>(changed) / static_cast<double>(a.size()));
    }

    constexpr int kSteps = 50;
    cudaEvent_t t0, t1;
    check(cudaEventCreate(&t0), "event");
    check(cudaEventCreate(&t1), "event");
    float eager_ms = 0, graph_ms = 0;
    check(cudaEventRecord(t0, s), "record");
    for (int i = 0; i < kSteps; ++i) step(static_cast<std::uint64_t>(i), nullptr);
    check(cudaEventRecord(t1, s), "record");
    check(cudaEventSynchronize(t1), "sync");
    check(cudaEventElapsedTime(&eager_ms, t0, t1), "elapsed");
    check(cudaEventRecord(t0, s), "record");
    for (int i = 0; i < kSteps; ++i) check(cudaGraphLaunch(exec, s), "replay");
    check(cudaEventRecord(t1, s), "record");
    check(cudaEventSynchronize(t1), "sync");
    check(cudaEventElapsedTime(&graph_ms, t0, t1), "elapsed");
    std::printf("step %lldx%lld -> %lld -> %lld: eager %.1f us, graph replay %.1f us (mean of %d)\n",
                static_cast<long long>(batch), static_cast<long long>(d_in), static_cast<long long>(hidden),
                static_cast<long long>(d_out), 1000.0 * eager_ms / kSteps, 1000.0 * graph_ms / kSteps, kSteps);

    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaFree(step_offset);
    cudaStreamDestroy(s);
    if (!ok) {
      std::fprintf(stderr, "mlp_step: the graph replays do not reproduce the eager steps at offsets 0..%d\n",
                   kReplays - 1);
      return 1;
    }
    std::printf("graph replays 1..%d == eager steps at offsets 0..%d: yes, bitwise, each with its own mask\n",
                kReplays, kReplays - 1);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mlp_step: %s\n", e.what());
    return 2;
  }
}
