// mlp_step: one training step of a two-layer MLP through gemmtune::Runtime, captured in a CUDA graph and replayed.
//
//   H = dropout(gelu(X·W1 + b1))   (Z1 kept for the backward)
//   Y = H·W2 + b2,  loss = ½‖Y − T‖²,  gY = Y − T
//   backward of layer 2: gH, gW2, gb2;  backward of layer 1: gW1, gb1 (gX is not needed)
//
// The step runs once eagerly (which resolves every GEMM it uses), is captured into a graph, and the replay's
// outputs are compared with the eager ones; then both are timed. Only the public header is used.
//
//   mlp_step [DB] [BATCH D_IN HIDDEN D_OUT]      (defaults: results/gemmtune.db 512 1024 4096 1024)
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
  const std::string db = argc > 1 ? argv[1] : "results/gemmtune.db";
  const std::int64_t batch = argc > 5 ? std::atoll(argv[2]) : 512, d_in = argc > 5 ? std::atoll(argv[3]) : 1024,
                     hidden = argc > 5 ? std::atoll(argv[4]) : 4096, d_out = argc > 5 ? std::atoll(argv[5]) : 1024;
  try {
    gemmtune::Runtime rt(db);
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

    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    const std::uint64_t seed = 2024, offset = 0;
    const auto step = [&] {
      rt.forward(l1, x.data, w1.data, b1.data, h.data, z1.data, s, seed, offset);
      rt.forward(l2, h.data, w2.data, b2.data, y.data, nullptr, s);
      loss_grad_kernel<<<256, 256, 0, s>>>(y.data, target.data, gy.data, gy.count);
      rt.backward(l2, h.data, w2.data, nullptr, gy.data, gh.data, gw2.data, gb2.data, s);
      rt.backward(l1, x.data, w1.data, z1.data, gh.data, nullptr, gw1.data, gb1.data, s, seed, offset);
    };
    const std::vector<const Tensor*> outputs = {&y, &gh, &gw1, &gb1, &gw2, &gb2};
    const char* names[] = {"Y", "gH", "gW1", "gb1", "gW2", "gb2"};

    step();  // eager; resolves every problem of the step (the graph then contains only launches)
    check(cudaStreamSynchronize(s), "eager step");
    std::vector<std::vector<float>> eager;
    for (const Tensor* t : outputs) eager.push_back(t->host());
    std::printf("%s\n%s\n%s\n%s\n", rt.explain(l1).c_str(), rt.explain(l2).c_str(), rt.explain_backward(l1).c_str(),
                rt.explain_backward(l2).c_str());

    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    check(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), "begin capture");
    step();
    check(cudaStreamEndCapture(s, &graph), "end capture");
    check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    for (const Tensor* t : outputs) check(cudaMemsetAsync(t->data, 0xFF, t->count * sizeof(float), s), "poison");
    check(cudaGraphLaunch(exec, s), "replay");
    check(cudaStreamSynchronize(s), "replay");

    bool all_identical = true;
    double worst = 0;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const std::vector<float> replay = outputs[i]->host();
      double diff = 0, norm = 0;
      for (std::size_t j = 0; j < replay.size(); ++j) {
        diff += (double{replay[j]} - eager[i][j]) * (double{replay[j]} - eager[i][j]);
        norm += double{eager[i][j]} * eager[i][j];
      }
      const double rel = std::isfinite(diff) ? std::sqrt(diff / (norm > 0 ? norm : 1)) : INFINITY;
      const bool identical = std::memcmp(replay.data(), eager[i].data(), replay.size() * sizeof(float)) == 0;
      all_identical = all_identical && identical;
      worst = rel > worst ? rel : worst;
      std::printf("replay vs eager %-4s %s (relative difference %.3g)\n", names[i],
                  identical ? "bitwise identical" : "differs", rel);
    }

    constexpr int kSteps = 50;
    cudaEvent_t t0, t1;
    check(cudaEventCreate(&t0), "event");
    check(cudaEventCreate(&t1), "event");
    float eager_ms = 0, graph_ms = 0;
    check(cudaEventRecord(t0, s), "record");
    for (int i = 0; i < kSteps; ++i) step();
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
    cudaStreamDestroy(s);
    if (!all_identical && worst > 1e-6) {
      std::fprintf(stderr, "mlp_step: the graph replay does not reproduce the eager step\n");
      return 1;
    }
    std::printf("graph replay == eager: %s\n", all_identical ? "yes, bitwise" : "yes, within 1e-6 relative");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mlp_step: %s\n", e.what());
    return 2;
  }
}
