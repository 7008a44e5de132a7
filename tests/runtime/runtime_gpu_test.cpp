#include "gemmtune/runtime.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/device_info.hpp"
#include "cuda/stream.hpp"
#include "db/tuning_db.hpp"
#include "kernels/epilogue.cuh"
#include "kernels/kernel_test_support.hpp"
#include "kernels/registry.hpp"
#include "launch/blocking_kernel.hpp"
#include "launch/problem_buffers.hpp"
#include "lt/lt_gemm.hpp"
#include "lt/lt_handles.hpp"
#include "lt/lt_padding.hpp"
#include "problem/pass_gemm.hpp"
#include "support/gpu_test.hpp"
#include "support/scoped_env.hpp"
#include "support/scratch_dir.hpp"
#include "support/tuning_fixtures.hpp"
#include "tuner/verifier.hpp"

namespace gemmtune {
namespace {

using test::host_relative_error;
using test::random_floats;
using test::to_device;
using test::to_host;

constexpr Activation kActivations[] = {Activation::None,    Activation::Relu,    Activation::LeakyRelu, Activation::Gelu,
                                       Activation::GeluErf, Activation::Sigmoid, Activation::Tanh};
constexpr MathMode kModes[] = {MathMode::Fp32, MathMode::Tf32, MathMode::Tf32x3};

GemmProblem make(std::int64_t m, std::int64_t n, std::int64_t k, const std::string& layout, OutputLayout out,
                 Activation act, bool bias, float dropout, MathMode mode) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.trans_a = layout[0] == 't';
  p.trans_b = layout[1] == 't';
  p.out = out;
  p.epi.bias = bias;
  p.epi.act = act;
  p.epi.leaky_slope = 0.125f;
  p.epi.save_z = act != Activation::None;
  p.epi.dropout_p = dropout;
  p.mode = mode;
  return p;
}

// A Runtime on a db path that does not exist (heuristic defaults), its warnings kept for the test. Without the
// first-use trial, so the choices are the cache's and the evidence rules', not a timing's.
struct Fixture {
  explicit Fixture(const std::string& db) {
    RuntimeOptions o;
    o.confirm_standins = false;
    o.warnings = &warnings;
    rt.emplace(db, 0, o);
  }
  std::ostringstream warnings;
  std::optional<Runtime> rt;
};

// act'(z), written out independently of kernels/epilogue.cuh.
double cpu_derivative(Activation act, double z, double slope) {
  const double pi = 3.14159265358979323846;
  switch (act) {
    case Activation::None: return 1.0;
    case Activation::Relu: return z > 0.0 ? 1.0 : 0.0;
    case Activation::LeakyRelu: return z > 0.0 ? 1.0 : slope;
    case Activation::Gelu: {
      const double c = std::sqrt(2.0 / pi), u = c * (z + 0.044715 * z * z * z), t = std::tanh(u);
      return 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * c * (1.0 + 3.0 * 0.044715 * z * z);
    }
    case Activation::GeluErf:
      return 0.5 * (1.0 + std::erf(z / std::sqrt(2.0))) + z * std::exp(-0.5 * z * z) / std::sqrt(2.0 * pi);
    case Activation::Sigmoid: {
      const double s = 1.0 / (1.0 + std::exp(-z));
      return s * (1.0 - s);
    }
    case Activation::Tanh: return 1.0 - std::tanh(z) * std::tanh(z);
  }
  return 1.0;
}

std::size_t at(bool transposed, std::int64_t rows, std::int64_t cols, std::int64_t r, std::int64_t c) {
  return static_cast<std::size_t>(transposed ? c * rows + r : r * cols + c);
}

struct BackwardReference {
  std::vector<double> ga, gb, gbias;
};

// gZ, gA, gB and gBias of problem p in fp64 from the fp32 inputs, each in its operand's stored layout.
BackwardReference cpu_backward(const GemmProblem& p, const std::vector<float>& a, const std::vector<float>& b,
                               const std::vector<float>& z, const std::vector<float>& gy, std::uint64_t seed,
                               std::uint64_t offset) {
  const bool tz = p.out == OutputLayout::Transposed;
  std::vector<double> gz(static_cast<std::size_t>(p.m * p.n));
  for (std::int64_t r = 0; r < p.m; ++r)
    for (std::int64_t c = 0; c < p.n; ++c) {
      const std::size_t i = at(tz, p.m, p.n, r, c);
      double g = gy[i] * cpu_derivative(p.epi.act, p.epi.act == Activation::None ? 0.0 : z[i], p.epi.leaky_slope);
      if (p.epi.dropout()) {
        const bool keep = kernels::dropout_keep(seed, offset, static_cast<std::uint64_t>(r * p.n + c), p.epi.dropout_p);
        g = keep ? g / (1.0 - p.epi.dropout_p) : 0.0;
      }
      gz[i] = g;
    }
  BackwardReference ref;
  ref.ga.assign(static_cast<std::size_t>(p.m * p.k), 0.0);
  ref.gb.assign(static_cast<std::size_t>(p.k * p.n), 0.0);
  ref.gbias.assign(static_cast<std::size_t>(p.n), 0.0);
  for (std::int64_t r = 0; r < p.m; ++r)
    for (std::int64_t c = 0; c < p.n; ++c) {
      const double g = gz[at(tz, p.m, p.n, r, c)];
      ref.gbias[static_cast<std::size_t>(c)] += g;
      for (std::int64_t i = 0; i < p.k; ++i) {
        ref.ga[at(p.trans_a, p.m, p.k, r, i)] += g * b[at(p.trans_b, p.k, p.n, i, c)];
        ref.gb[at(p.trans_b, p.k, p.n, i, c)] += a[at(p.trans_a, p.m, p.k, r, i)] * g;
      }
    }
  return ref;
}

// A backward's fresh random inputs (Z in [-2, 2), where the activations bend), on the host and the device, and its
// NaN-free output buffers.
struct BackwardInputs {
  BackwardInputs(const GemmProblem& p, std::uint32_t seed)
      : a(random_floats(static_cast<std::size_t>(p.m * p.k), seed)),
        b(random_floats(static_cast<std::size_t>(p.k * p.n), seed + 1)),
        z(random_floats(static_cast<std::size_t>(p.m * p.n), seed + 2, -2.f, 2.f)),
        gy(random_floats(static_cast<std::size_t>(p.m * p.n), seed + 3)),
        A(to_device(a)), B(to_device(b)), Z(to_device(z)), gY(to_device(gy)),
        gA(a.size()), gB(b.size()), gBias(static_cast<std::size_t>(p.n)) {}
  std::vector<float> a, b, z, gy;
  DeviceBuffer<float> A, B, Z, gY, gA, gB, gBias;
};

TEST(RuntimeGpu, ForwardMatchesTheFp64ReferenceForEveryEpilogueLayoutAndMode) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  Fixture f(dir.path("none.db"));
  const CudaStream s;
  int checked = 0;
  for (MathMode mode : kModes)
    for (const char* layout : {"nn", "nt", "tn", "tt"})
      for (OutputLayout out : {OutputLayout::RowMajor, OutputLayout::Transposed})
        for (Activation act : kActivations)
          for (bool bias : {false, true})
            for (float dropout : {0.0f, 0.3f}) {
              const bool odd = checked % 2 == 0;
              const GemmProblem p = make(odd ? 37 : 64, odd ? 45 : 40, odd ? 29 : 72, layout, out, act, bias, dropout, mode);
              const test::ProblemData d(p, static_cast<std::uint32_t>(1000 + checked));
              f.rt->forward(p, d.operands(), s.get());
              s.synchronize();
              std::vector<double> y_ref, z_ref;
              test::cpu_reference(d, y_ref, p.epi.save_z ? &z_ref : nullptr);
              const double tol = verification_tolerance(p);
              const double y_err = host_relative_error(to_host(d.Y.get(), y_ref.size()), y_ref);
              EXPECT_LE(y_err, tol) << f.rt->explain(p);
              if (p.epi.save_z) {
                EXPECT_LE(host_relative_error(to_host(d.Z.get(), z_ref.size()), z_ref), tol) << p.key();
              }
              ++checked;
            }
  EXPECT_EQ(checked, 3 * 4 * 2 * 7 * 2 * 2);
}

TEST(RuntimeGpu, BackwardMatchesTheFp64ReferenceForEveryActivationLayoutAndMode) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  Fixture f(dir.path("none.db"));
  const CudaStream s;
  int checked = 0;
  for (MathMode mode : kModes)
    for (const char* layout : {"nn", "nt", "tn", "tt"})
      for (OutputLayout out : {OutputLayout::RowMajor, OutputLayout::Transposed})
        for (Activation act : kActivations)
          for (bool bias : {false, true})
            for (float dropout : {0.0f, 0.3f}) {
              const bool odd = checked % 2 == 0;
              // Odd shapes take the scalar path; 64x40 the 16-byte one in both output layouts.
              const GemmProblem p = make(odd ? 37 : 64, odd ? 45 : 40, odd ? 29 : 70, layout, out, act, bias, dropout, mode);
              const auto seed = static_cast<std::uint32_t>(5000 + 8 * checked);
              BackwardInputs in(p, seed);
              const std::vector<float> &a = in.a, &b = in.b, &z = in.z, &gy = in.gy;
              const DeviceBuffer<float> &A = in.A, &B = in.B, &Z = in.Z, &gY = in.gY;
              DeviceBuffer<float> &gA = in.gA, &gB = in.gB, &gBias = in.gBias;
              test::poison(gA);
              test::poison(gB);
              test::poison(gBias);
              const std::uint64_t dseed = 0x1234567890abcdefull + seed, doffset = seed * 77ull;
              f.rt->backward(p, A.get(), B.get(), p.epi.act == Activation::None ? nullptr : Z.get(), gY.get(), gA.get(),
                             gB.get(), bias ? gBias.get() : nullptr, s.get(), dseed, doffset);
              s.synchronize();
              const BackwardReference ref = cpu_backward(p, a, b, z, gy, dseed, doffset);
              const double tol_a = verification_tolerance(pass_gemm(backward_problem(p, Pass::GradA)));
              const double tol_b = verification_tolerance(pass_gemm(backward_problem(p, Pass::GradB)));
              EXPECT_LE(host_relative_error(to_host(gA.get(), a.size()), ref.ga), tol_a) << f.rt->explain_backward(p);
              EXPECT_LE(host_relative_error(to_host(gB.get(), b.size()), ref.gb), tol_b) << f.rt->explain_backward(p);
              if (bias) {
                EXPECT_LE(host_relative_error(to_host(gBias.get(), ref.gbias.size()), ref.gbias), 1e-5) << p.key();
              }
              ++checked;
            }
  EXPECT_EQ(checked, 3 * 4 * 2 * 7 * 2 * 2);
}

// The first variant of the registry that can run p and has what `wanted` asks for.
template <class Wanted>
std::string first_variant(const GemmProblem& p, Wanted&& wanted) {
  for (const kernels::KernelVariant& v : kernels::kernel_registry())
    if (v.mode == p.mode && wanted(v) && v.unsupported_reason(p).empty()) return "own/" + v.name;
  ADD_FAILURE() << "no variant of this build runs " << p.key() << " the way the test needs";
  return "";
}

// One Runtime, called from 8 host threads at once, each on a stream of its own, 10,080 calls in all, every result
// checked against fp64. The problems are pinned to every candidate family that writes scratch besides its output: our
// split-k (partials and tickets), a k split over a cluster, a staged variant (operand copies), cuBLASLt's GEMM followed
// by our epilogue kernel, cuBLASLt's own choice for a long k (its workspace), and a small backward with a bias
// gradient (gZ, partial sums and tickets, and its two GEMMs side by side on a second stream). With scratch shared
// between streams such calls overwrote each other's (issue 47: 2 of 320 results wrong, silently).
TEST(RuntimeGpu, CallsFromManyThreadsOnManyStreamsThroughOneRuntimeAreAllRight) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  Fixture f(dir.path("none.db"));
  Runtime& rt = *f.rt;
  constexpr int kThreads = 8, kRounds = 210;
  const GemmProblem split = make(192, 256, 6144, "nn", OutputLayout::RowMajor, Activation::Relu, true, 0.f,
                                 MathMode::Tf32);
  const GemmProblem cluster = make(128, 160, 4096, "nn", OutputLayout::RowMajor, Activation::None, true, 0.f,
                                   MathMode::Fp32);
  const GemmProblem staged = make(300, 517, 999, "nn", OutputLayout::RowMajor, Activation::Gelu, true, 0.f,
                                  MathMode::Tf32);
  const GemmProblem lt_epi = make(512, 384, 1024, "nn", OutputLayout::RowMajor, Activation::Gelu, true, 0.f,
                                  MathMode::Tf32);
  const GemmProblem lt_long_k = make(64, 96, 12288, "nn", OutputLayout::RowMajor, Activation::None, false, 0.f,
                                     MathMode::Fp32);
  const GemmProblem bwd = make(96, 160, 136, "nn", OutputLayout::RowMajor, Activation::Gelu, true, 0.f, MathMode::Tf32);
  rt.pin(split, first_variant(split, [&](const kernels::KernelVariant& v) { return v.split_k_tickets(split) > 0; }));
  rt.pin(cluster, first_variant(cluster, [](const kernels::KernelVariant& v) { return v.tile.cluster > 1; }));
  rt.pin(staged, first_variant(staged, [](const kernels::KernelVariant& v) { return v.staged; }));
  {
    RuntimeOptions o;
    o.confirm_standins = false;
    Runtime heuristic(dir.path("none.db"), 0, o);
    rt.pin(lt_epi, heuristic.candidate_id(lt_epi) + "+epi");
  }
  const std::vector<GemmProblem> forwards = {split, cluster, staged, lt_epi, lt_long_k};
  rt.prepare_backward(bwd);
  for (const GemmProblem& p : forwards) std::cout << rt.explain(p) << "\n";
  std::cout << rt.explain_backward(bwd) << "\n";

  std::atomic<int> calls{0}, wrong{0};
  std::mutex first_wrong_mutex;
  std::string first_wrong;
  const auto report = [&](const std::string& what) {
    ++wrong;
    const std::lock_guard<std::mutex> lock(first_wrong_mutex);
    if (first_wrong.empty()) first_wrong = what;
  };
  const auto work = [&](int thread) {
    const CudaStream s;
    std::vector<std::unique_ptr<ProblemBuffers>> buffers;
    std::vector<std::unique_ptr<Verifier>> verifiers;
    for (std::size_t i = 0; i < forwards.size(); ++i) {
      buffers.push_back(std::make_unique<ProblemBuffers>(forwards[i], 0, 7000 + 100 * thread + i, s.get()));
      verifiers.push_back(std::make_unique<Verifier>(forwards[i], *buffers.back(), s.get()));
    }
    BackwardInputs in(bwd, static_cast<std::uint32_t>(9000 + 16 * thread));
    const std::vector<float> &a = in.a, &b = in.b;
    DeviceBuffer<float> &gA = in.gA, &gB = in.gB, &gBias = in.gBias;
    const BackwardReference ref = cpu_backward(bwd, in.a, in.b, in.z, in.gy, 0, 0);
    const double tol_a = verification_tolerance(pass_gemm(backward_problem(bwd, Pass::GradA)));
    const double tol_b = verification_tolerance(pass_gemm(backward_problem(bwd, Pass::GradB)));
    for (int round = 0; round < kRounds; ++round) {
      for (std::size_t i = 0; i < forwards.size(); ++i) {
        buffers[i]->poison_outputs(s.get());
        rt.forward(forwards[i], buffers[i]->operands(0), s.get());
        const Verdict v = verifiers[i]->compare(buffers[i]->y(), buffers[i]->z(), s.get());
        ++calls;
        if (!v.ok) report(forwards[i].key() + " on thread " + std::to_string(thread) + ": " + v.message);
      }
      for (DeviceBuffer<float>* out : {&gA, &gB, &gBias})
        GT_CUDA_CALL(cudaMemsetAsync(out->get(), 0xff, out->bytes(), s.get()));
      rt.backward(bwd, in.A.get(), in.B.get(), in.Z.get(), in.gY.get(), gA.get(), gB.get(), gBias.get(), s.get());
      s.synchronize();
      ++calls;
      const double ea = host_relative_error(to_host(gA.get(), a.size()), ref.ga);
      const double eb = host_relative_error(to_host(gB.get(), b.size()), ref.gb);
      const double ebias = host_relative_error(to_host(gBias.get(), ref.gbias.size()), ref.gbias);
      if (!(ea <= tol_a && eb <= tol_b && ebias <= 1e-5))
        report("backward of " + bwd.key() + " on thread " + std::to_string(thread) + ": gA " + std::to_string(ea) +
               ", gB " + std::to_string(eb) + ", gBias " + std::to_string(ebias));
    }
  };
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> failures(kThreads);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        work(t);
      } catch (...) {
        failures[static_cast<std::size_t>(t)] = std::current_exception();
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : failures)
    if (e) std::rethrow_exception(e);
  const StreamScratchUse use = rt.stream_scratch();
  std::cout << calls.load() << " calls from " << kThreads << " threads on " << use.streams << " streams, "
            << wrong.load() << " wrong; stream scratch " << (use.device_bytes >> 20) << " MiB in all\n";
  EXPECT_EQ(calls.load(), kThreads * kRounds * (static_cast<int>(forwards.size()) + 1));
  EXPECT_GE(calls.load(), 10000);
  EXPECT_EQ(use.streams, static_cast<std::size_t>(kThreads));
  EXPECT_EQ(wrong.load(), 0) << "first: " << first_wrong;
}

// A capture's scratch is made at its first call, inside a capture begun in the strictest mode (as torch.cuda.graph
// begins them): the allocation is no node of the graph, the replays are right, and they share no scratch with eager
// calls on the capture stream.
TEST(RuntimeGpu, ACapturesFirstCallGetsScratchOfItsOwnAndItsReplaysAreRight) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  Fixture f(dir.path("none.db"));
  const GemmProblem p = make(96, 160, 136, "nn", OutputLayout::RowMajor, Activation::Gelu, true, 0.f, MathMode::Tf32);
  const CudaStream eager, captured;
  const test::ProblemData d(p, 4242);
  f.rt->forward(p, d.operands(), eager.get());  // resolves the problem outside the capture
  eager.synchronize();
  cudaGraph_t graph = nullptr;
  GT_CUDA_CALL(cudaStreamBeginCapture(captured.get(), cudaStreamCaptureModeGlobal));
  try {
    f.rt->forward(p, d.operands(), captured.get());
  } catch (...) {  // a capture left open would fail every later test's CUDA calls
    cudaStreamEndCapture(captured.get(), &graph);
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  GT_CUDA_CALL(cudaStreamEndCapture(captured.get(), &graph));
  cudaGraphExec_t exec = nullptr;
  GT_CUDA_CALL(cudaGraphInstantiate(&exec, graph, 0));
  EXPECT_EQ(f.rt->stream_scratch().streams, 1u);
  EXPECT_EQ(f.rt->stream_scratch().captures, 1u);
  f.rt->forward(p, d.operands(), captured.get());
  captured.synchronize();
  EXPECT_EQ(f.rt->stream_scratch().streams, 2u) << "eager calls on the capture stream share the graph's scratch";
  std::vector<double> y_ref;
  test::cpu_reference(d, y_ref, nullptr);
  for (int replay = 0; replay < 3; ++replay) {
    GT_CUDA_CALL(cudaMemsetAsync(d.Y.get(), 0xff, d.Y.bytes(), captured.get()));
    GT_CUDA_CALL(cudaGraphLaunch(exec, captured.get()));
    captured.synchronize();
    EXPECT_LE(host_relative_error(to_host(d.Y.get(), y_ref.size()), y_ref), verification_tolerance(p)) << replay;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

// The kernel nodes of one forward call of p captured on `s` into a graph, which the caller replays and destroys.
struct CapturedCall {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::size_t kernel_nodes = 0;
  ~CapturedCall() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
};
void capture_forward(Runtime& rt, const GemmProblem& p, const GemmOperands& x, cudaStream_t s, CapturedCall& out) {
  GT_CUDA_CALL(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  try {
    rt.forward(p, x, s);
  } catch (...) {  // a capture left open would fail every later test's CUDA calls
    cudaStreamEndCapture(s, &out.graph);
    throw;
  }
  GT_CUDA_CALL(cudaStreamEndCapture(s, &out.graph));
  std::size_t count = 0;
  GT_CUDA_CALL(cudaGraphGetNodes(out.graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  GT_CUDA_CALL(cudaGraphGetNodes(out.graph, nodes.data(), &count));
  for (cudaGraphNode_t n : nodes) {
    cudaGraphNodeType type{};
    GT_CUDA_CALL(cudaGraphNodeGetType(n, &type));
    if (type == cudaGraphNodeTypeKernel) ++out.kernel_nodes;
  }
  GT_CUDA_CALL(cudaGraphInstantiate(&out.exec, out.graph, 0));
}

// A choice with a candidate for graphs (a first-use trial's winner faster from a graph, here a pin's) runs it in calls
// inside a capture and the other on a stream: our wgmma tile, one kernel, on the stream; cuBLASLt's plain GEMM and
// our epilogue kernel, two at least, in the graph, where a runtime pinned to the tile alone captures one. Both match
// the fp64 reference into a poisoned output.
TEST(RuntimeGpu, ACallInsideACaptureRunsTheChoicesCandidateForGraphsAndAStreamCallTheOther) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  Fixture f(dir.path("none.db")), tile_only(dir.path("none.db"));
  const GemmProblem p = make(512, 384, 1024, "nn", OutputLayout::RowMajor, Activation::Gelu, true, 0.f,
                             MathMode::Tf32);
  const std::string tile = "own/wgmma_tf32_128x128x32_s4";
  std::string plain_then_ours;
  {
    RuntimeOptions o;
    o.confirm_standins = false;
    Runtime heuristic(dir.path("none.db"), 0, o);
    plain_then_ours = heuristic.candidate_id(p) + "+epi";
  }
  f.rt->pin(p, tile, plain_then_ours);
  tile_only.rt->pin(p, tile);
  EXPECT_EQ(f.rt->candidate_id(p), tile);
  EXPECT_EQ(f.rt->candidate_id(p, true), plain_then_ours);
  EXPECT_EQ(tile_only.rt->candidate_id(p, true), tile) << "no candidate for graphs: the same one runs there";
  EXPECT_NE(f.rt->explain(p).find("inside a CUDA graph capture " + plain_then_ours + " runs instead"),
            std::string::npos)
      << f.rt->explain(p);
  test::ProblemData d(p, 5150);
  std::vector<double> y_ref;
  test::cpu_reference(d, y_ref, nullptr);
  const CudaStream s;
  test::poison(d.Y);
  f.rt->forward(p, d.operands(), s.get());
  s.synchronize();
  EXPECT_LE(host_relative_error(to_host(d.Y.get(), y_ref.size()), y_ref), verification_tolerance(p)) << "stream";
  CapturedCall both, alone;
  capture_forward(*f.rt, p, d.operands(), s.get(), both);
  capture_forward(*tile_only.rt, p, d.operands(), s.get(), alone);
  EXPECT_EQ(alone.kernel_nodes, 1u);
  EXPECT_GE(both.kernel_nodes, 2u) << "the plain GEMM and our epilogue kernel";
  for (const CapturedCall* c : {&both, &alone}) {
    test::poison(d.Y);
    GT_CUDA_CALL(cudaGraphLaunch(c->exec, s.get()));
    s.synchronize();
    EXPECT_LE(host_relative_error(to_host(d.Y.get(), y_ref.size()), y_ref), verification_tolerance(p))
        << (c == &both ? "graph of the candidate for graphs" : "graph of the tile");
  }
  const GemmProblem q = make(64, 64, 64, "nn", OutputLayout::RowMajor, Activation::None, false, 0.f, MathMode::Tf32);
  EXPECT_THROW(tile_only.rt->pin(q, tile, "lt/not-an-id"), InputError);
  EXPECT_FALSE(tile_only.rt->prepared(q)) << "a pin refused for its candidate for graphs leaves no half of it";
}

// A forward call repeated with the same pointers and values is captured at its second sight and replayed from then
// on (runtime/call_graphs.hpp). Each kind of candidate (cuBLASLt's heuristic, a `+pad` one's three launches, cuBLAS's
// own call, one of our split-k variants with its tickets) computes bit for bit what its first, launched call
// computed, into a poisoned output every time; a call that differs in one pointer or in the dropout offset is not
// the replay of another.
TEST(RuntimeGpu, ACallRepeatedExactlyReplaysAGraphThatComputesWhatItsLaunchComputed) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  const CudaStream s;
  struct Case {
    GemmProblem p;
    std::string pinned;  // empty: the heuristic default
  };
  const LtHandle lt = make_lt_handle();
  const GemmProblem odd = make(37, 45, 29, "nn", OutputLayout::RowMajor, Activation::Gelu, true, 0.2f, MathMode::Tf32);
  const std::vector<Candidate> padded = LtGemm(lt.get(), odd, LtEpilogueMode::Padded).heuristic(1, 64 << 20);
  ASSERT_EQ(padded.size(), 1u);
  const std::vector<Case> cases = {
      {make(96, 160, 136, "nn", OutputLayout::RowMajor, Activation::Gelu, true, 0.f, MathMode::Tf32), ""},
      {odd, padded[0].id()},
      {make(96, 160, 136, "nt", OutputLayout::RowMajor, Activation::None, false, 0.f, MathMode::Fp32), "cublas/sgemm"},
      {make(256, 256, 256, "nn", OutputLayout::RowMajor, Activation::Relu, true, 0.1f, MathMode::Fp32),
       "own/fp32_64x64x16_w32x32_t8x4_s2_split4"}};
  for (const Case& c : cases) {
    Fixture f(dir.path("none.db"));
    if (!c.pinned.empty()) f.rt->pin(c.p, c.pinned);
    test::ProblemData d(c.p, 77);
    std::vector<double> y_ref;
    test::cpu_reference(d, y_ref, nullptr);
    std::vector<float> first;
    for (int call = 0; call < 4; ++call) {
      test::poison(d.Y);
      f.rt->forward(c.p, d.operands(), s.get());
      s.synchronize();
      const std::vector<float> y = to_host(d.Y.get(), d.Y.size());
      if (call == 0) {
        first = y;
        EXPECT_LE(host_relative_error(y, y_ref), verification_tolerance(c.p)) << f.rt->explain(c.p);
      }
      EXPECT_EQ(y, first) << f.rt->explain(c.p) << ", call " << call;
    }
    EXPECT_EQ(f.rt->call_graphs().graphs, 1u) << f.rt->explain(c.p);
    EXPECT_EQ(f.rt->call_graphs().replays, 3u) << "the second call captured and replayed, the later ones replayed";

    test::ProblemData other(c.p, 78);  // the same shape, other buffers: launched, not the first call's replay
    test::poison(d.Y);
    for (int call = 0; call < 3; ++call) {
      test::poison(other.Y);
      f.rt->forward(c.p, other.operands(), s.get());
      s.synchronize();
      std::vector<double> other_ref;
      test::cpu_reference(other, other_ref, nullptr);
      EXPECT_LE(host_relative_error(to_host(other.Y.get(), other.Y.size()), other_ref), verification_tolerance(c.p))
          << f.rt->explain(c.p) << ", other buffers, call " << call;
    }
    const std::vector<float> untouched = to_host(d.Y.get(), d.Y.size());
    EXPECT_TRUE(std::all_of(untouched.begin(), untouched.end(), [](float v) { return std::isnan(v); }))
        << "a call on other buffers wrote the first call's Y";
    EXPECT_EQ(f.rt->call_graphs().graphs, 2u);
    if (c.p.epi.dropout()) {  // a new offset is a new call: its own mask, not the last one's replay
      GemmOperands next = d.operands();
      next.offset += 1;
      test::ProblemData shifted(c.p, 77);
      shifted.dropout_offset = next.offset;
      std::vector<double> shifted_ref;
      test::cpu_reference(shifted, shifted_ref, nullptr);
      test::poison(d.Y);
      f.rt->forward(c.p, next, s.get());
      s.synchronize();
      const std::vector<float> y = to_host(d.Y.get(), d.Y.size());
      EXPECT_NE(y, first);
      EXPECT_LE(host_relative_error(y, shifted_ref), verification_tolerance(c.p)) << "the next offset's mask";
    }
  }
}

// cuBLASLt's split-k algos at m = 1 lose replayed (runtime::launches_every_call): such a call is launched every time,
// none captured, each launch into a poisoned Y checked against fp64.
TEST(RuntimeGpu, ASingleRowCallOnACublasLtSplitKAlgoIsLaunchedEveryTimeNeverReplayed) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  const CudaStream s;
  const GemmProblem p = make(1, 1024, 13824, "nn", OutputLayout::RowMajor, Activation::None, false, 0.f,
                             MathMode::Tf32);
  const LtHandle lt = make_lt_handle();
  const std::vector<Candidate> algos = LtGemm(lt.get(), p, LtEpilogueMode::PreferFused).heuristic(16, 64 << 20);
  const auto split = std::find_if(algos.begin(), algos.end(), [](const Candidate& c) { return c.lt.splitk > 1; });
  if (split == algos.end()) GTEST_SKIP() << "cuBLASLt's heuristic offers no split-k algo for 1x1024x13824 here";
  Fixture f(dir.path("none.db"));
  f.rt->pin(p, split->id());
  test::ProblemData d(p, 79);
  std::vector<double> y_ref;
  test::cpu_reference(d, y_ref, nullptr);
  for (int call = 0; call < 4; ++call) {
    test::poison(d.Y);
    f.rt->forward(p, d.operands(), s.get());
    s.synchronize();
    EXPECT_LE(host_relative_error(to_host(d.Y.get(), d.Y.size()), y_ref), verification_tolerance(p))
        << f.rt->explain(p) << ", call " << call;
  }
  EXPECT_EQ(f.rt->call_graphs().graphs, 0u) << f.rt->explain(p);
  EXPECT_EQ(f.rt->call_graphs().replays, 0u);
  EXPECT_FALSE(f.rt->replays(p, d.operands(), s.get()));
}

// A program may queue calls behind a kernel that waits for the host (scripts/bench_heldout.sh's timed batches do).
// Instantiating and uploading a graph may wait for the GPU, so a repeated call is captured only where its stream has
// drained, and the replays of a graph made then are queued behind such a kernel without waiting for it.
TEST(RuntimeGpu, RepeatedCallsQueuedBehindAKernelThatWaitsForTheHostNeverWaitForIt) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  Fixture f(dir.path("none.db"));
  const GemmProblem p = make(1500, 1079, 799, "nn", OutputLayout::RowMajor, Activation::Gelu, true, 0.f,
                             MathMode::Tf32);
  const LtHandle lt = make_lt_handle();
  const std::vector<Candidate> padded = LtGemm(lt.get(), p, LtEpilogueMode::Padded).heuristic(1, 64 << 20);
  ASSERT_EQ(padded.size(), 1u);
  f.rt->pin(p, padded[0].id());  // three launches a call: the most a graph replaces
  test::ProblemData d(p, 4244);
  std::vector<double> y_ref;
  test::cpu_reference(d, y_ref, nullptr);
  const CudaStream s;
  BlockingKernel blocker;
  const auto queued_behind_the_blocker = [&](int calls) {
    test::poison(d.Y);
    blocker.block(s.get());
    for (int call = 0; call < calls; ++call) f.rt->forward(p, d.operands(), s.get());
    blocker.release();
    s.synchronize();
    EXPECT_FALSE(blocker.timed_out()) << "a call waited for the GPU behind the blocking kernel";
    EXPECT_LE(host_relative_error(to_host(d.Y.get(), y_ref.size()), y_ref), verification_tolerance(p));
  };
  // The process's first launches of these kernels load them, which may wait for the GPU (CUDA's lazy loading): done
  // before anything is queued behind the blocking kernel, as a program's first step would.
  f.rt->forward(p, d.operands(), s.get());
  s.synchronize();
  queued_behind_the_blocker(4);
  EXPECT_EQ(f.rt->call_graphs().graphs, 0u) << "repeated calls behind queued work are launched, not captured";
  f.rt->forward(p, d.operands(), s.get());  // the stream has drained: captured, uploaded and replayed
  s.synchronize();
  EXPECT_EQ(f.rt->call_graphs().graphs, 1u);
  queued_behind_the_blocker(4);
  EXPECT_EQ(f.rt->call_graphs().replays, 5u);
}

// A model's layers call one plan on other weights each time: replaying another one-kernel graph each call costs the
// GPU 0.13-0.46 us more than launching, which the host's launch time hides where the GPU is ahead
// (runtime/call_graphs.hpp). So once a plan's launch and replay costs are measured, rotating calls queued behind work
// are launched, computing what their replays did. So is the same call again here: the wgmma kernel starts behind the
// call before it, an overlap a replay would lose. Any call on a drained stream replays.
TEST(RuntimeGpu, CallsRotatingOverBuffersBehindQueuedWorkLaunchWhereTheKernelOutlastsTheLaunch) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  Fixture f(dir.path("none.db"));
  // 17 GFLOP: tens of microseconds on any GPU this runs on, several times a launch's host time.
  const GemmProblem p = make(2048, 2048, 2048, "nn", OutputLayout::RowMajor, Activation::None, false, 0.f,
                             MathMode::Tf32);
  f.rt->pin(p, "own/wgmma_tf32_128x128x32_s4");  // one kernel a call (cuBLASLt's choice here may add a split's nodes)
  test::ProblemData a(p, 611), b(p, 612);
  const CudaStream s;
  std::vector<float> first_a, first_b;
  // First sights launch, second sights capture (the stream drained), later ones replay, sampled between events.
  for (int round = 0; round < 4; ++round) {
    for (test::ProblemData* d : {&a, &b}) {
      test::poison(d->Y);
      f.rt->forward(p, d->operands(), s.get());
      s.synchronize();
      std::vector<float>& first = d == &a ? first_a : first_b;
      const std::vector<float> y = to_host(d->Y.get(), d->Y.size());
      if (round == 0) first = y;
      EXPECT_EQ(y, first) << f.rt->explain(p) << ", round " << round;
    }
  }
  ASSERT_EQ(f.rt->call_graphs().graphs, 2u) << f.rt->explain(p);
  EXPECT_EQ(f.rt->call_graphs().replays, 6u);
  EXPECT_EQ(f.rt->call_graphs().launches_ahead, 0u) << "every call found its stream drained";

  BlockingKernel blocker;
  const auto behind_the_blocker = [&](const std::vector<test::ProblemData*>& calls) {
    test::poison(a.Y);
    test::poison(b.Y);
    blocker.block(s.get());
    for (test::ProblemData* d : calls) f.rt->forward(p, d->operands(), s.get());
    blocker.release();
    s.synchronize();
    EXPECT_FALSE(blocker.timed_out()) << "a call waited for the GPU behind the blocking kernel";
  };
  behind_the_blocker({&a, &b, &a, &b, &a, &b});
  EXPECT_EQ(f.rt->call_graphs().launches_ahead, 6u) << f.rt->explain(p) << ": each call another graph than the last";
  EXPECT_EQ(f.rt->call_graphs().replays, 6u);
  EXPECT_EQ(to_host(a.Y.get(), a.Y.size()), first_a);
  EXPECT_EQ(to_host(b.Y.get(), b.Y.size()), first_b);

  behind_the_blocker({&a, &a, &a});
  EXPECT_EQ(f.rt->call_graphs().launches_ahead, 9u) << "the same call again too: its launches overlap";
  EXPECT_EQ(f.rt->call_graphs().replays, 6u);
  EXPECT_EQ(to_host(a.Y.get(), a.Y.size()), first_a);
}

// The runtime launches our wgmma kernels (and a staged variant's operand copy) behind the kernel before them on the
// stream (programmatic dependent launch): each must wait for that kernel's writes before it reads them, and before it
// overwrites what that kernel reads. Three calls queued back to back behind a blocking kernel, each reading the last
// one's output (H = X·W1, Y = H·W2) and the third overwriting the second's input (H = Y·W3), give exactly what the
// same calls give one at a time; aligned, and with rows that are not 16-byte aligned (a staged variant's copies).
TEST(RuntimeGpu, BackToBackCallsReadingAndOverwritingTheLastCallsBuffersMatchCallsOneAtATime) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  Fixture f(dir.path("none.db"));
  const auto chain = [&](std::int64_t m, std::int64_t n, std::int64_t k, const std::string& variant) {
    SCOPED_TRACE(variant + " at " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
    const auto plain = [](std::int64_t rows, std::int64_t cols, std::int64_t inner) {
      return make(rows, cols, inner, "nn", OutputLayout::RowMajor, Activation::None, false, 0.f, MathMode::Tf32);
    };
    const GemmProblem first = plain(m, n, k), second = plain(m, k, n), third = plain(m, n, k);
    f.rt->pin(first, variant);
    f.rt->pin(second, variant);
    test::ProblemData x(first, 901), w2(second, 902), w3(third, 903);
    DeviceBuffer<float> h(static_cast<std::size_t>(m * n)), y(static_cast<std::size_t>(m * k));
    GemmOperands h_from_x = x.operands(), y_from_h = w2.operands(), h_from_y = w3.operands();
    h_from_x.Y = h.get();
    y_from_h.A = h.get();
    y_from_h.Y = y.get();
    h_from_y.A = y.get();
    h_from_y.Y = h.get();
    const CudaStream s;
    const auto run = [&](bool one_at_a_time) {
      test::poison(h);
      test::poison(y);
      s.synchronize();
      BlockingKernel blocker;
      if (!one_at_a_time) blocker.block(s.get());
      f.rt->forward(first, h_from_x, s.get());
      if (one_at_a_time) s.synchronize();
      f.rt->forward(second, y_from_h, s.get());
      if (one_at_a_time) s.synchronize();
      f.rt->forward(third, h_from_y, s.get());
      if (!one_at_a_time) blocker.release();
      s.synchronize();
      EXPECT_FALSE(blocker.timed_out()) << "a call waited for the GPU behind the blocking kernel";
      return std::make_pair(to_host(h.get(), h.size()), to_host(y.get(), y.size()));
    };
    const auto apart = run(true);
    const auto back_to_back = run(false);
    EXPECT_EQ(back_to_back.second, apart.second) << "the second call read the first's H";
    EXPECT_EQ(back_to_back.first, apart.first) << "the third call's H, written over what the second read";
    // And the chain is right: the third call's H against Y·W3 in fp64, from the Y the calls left.
    std::vector<double> ref(static_cast<std::size_t>(m * n), 0.0);
    for (std::int64_t r = 0; r < m; ++r)
      for (std::int64_t i = 0; i < k; ++i) {
        const double yv = apart.second[static_cast<std::size_t>(r * k + i)];
        for (std::int64_t c = 0; c < n; ++c)
          ref[static_cast<std::size_t>(r * n + c)] += yv * w3.b[static_cast<std::size_t>(i * n + c)];
      }
    EXPECT_LE(host_relative_error(back_to_back.first, ref), verification_tolerance(third));
  };
  chain(512, 768, 384, "own/wgmma_tf32_128x128x32_s4");
  chain(512, 771, 385, "own/wgmma_tf32_64x128x32_s6_staged_b");  // k and n odd: both operands copied each call
}

// `gemmtune apply` asks Runtime::replays before handing a call to the library, and never calls forward for a call it
// hands over: the answer is true only for a resolved problem's exact repeat, and asking remembers a first sight, so
// the next sight, routed, is captured and replayed (and computes what a launch does).
TEST(RuntimeGpu, AskingWhetherACallReplaysRemembersItsFirstSightSoItsRepeatReplays) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  Fixture f(dir.path("none.db"));
  const GemmProblem p = make(96, 160, 136, "nn", OutputLayout::RowMajor, Activation::Gelu, true, 0.f, MathMode::Tf32);
  test::ProblemData d(p, 4245), other(p, 4246);
  std::vector<double> y_ref;
  test::cpu_reference(d, y_ref, nullptr);
  const CudaStream s;
  EXPECT_FALSE(f.rt->replays(p, d.operands(), s.get())) << "a problem not yet resolved";
  f.rt->forward(p, other.operands(), s.get());  // resolves it, on other buffers
  s.synchronize();
  EXPECT_FALSE(f.rt->replays(p, d.operands(), s.get())) << "a first sight";
  EXPECT_TRUE(f.rt->replays(p, d.operands(), s.get())) << "its repeat";
  EXPECT_EQ(f.rt->call_graphs().graphs, 0u) << "asking captures nothing";
  test::poison(d.Y);
  f.rt->forward(p, d.operands(), s.get());
  s.synchronize();
  EXPECT_EQ(f.rt->call_graphs().graphs, 1u);
  EXPECT_EQ(f.rt->call_graphs().replays, 1u);
  EXPECT_LE(host_relative_error(to_host(d.Y.get(), y_ref.size()), y_ref), verification_tolerance(p));

  RuntimeOptions o;
  o.confirm_standins = false;
  o.replay_repeated_calls = false;
  Runtime off(dir.path("none.db"), 0, o);
  off.forward(p, d.operands(), s.get());
  s.synchronize();
  EXPECT_FALSE(off.replays(p, d.operands(), s.get()));
  EXPECT_FALSE(off.replays(p, d.operands(), s.get())) << "replays off: never";
}

// Where replays are off, and for calls the caller is capturing into a graph of its own, every call launches.
TEST(RuntimeGpu, RepeatedCallsLaunchWhereReplaysAreOffOrTheCallerIsCapturing) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  const GemmProblem p = make(96, 160, 136, "nn", OutputLayout::RowMajor, Activation::Gelu, true, 0.f, MathMode::Tf32);
  const test::ProblemData d(p, 4243);
  const CudaStream s;
  RuntimeOptions o;
  o.confirm_standins = false;
  o.replay_repeated_calls = false;
  Runtime off(dir.path("none.db"), 0, o);
  for (int call = 0; call < 3; ++call) off.forward(p, d.operands(), s.get());
  s.synchronize();
  EXPECT_EQ(off.call_graphs().graphs, 0u);
  EXPECT_EQ(off.call_graphs().replays, 0u);

  Fixture f(dir.path("none.db"));
  f.rt->forward(p, d.operands(), s.get());  // resolves the problem outside the capture
  s.synchronize();
  cudaGraph_t graph = nullptr;
  GT_CUDA_CALL(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeGlobal));
  try {
    for (int call = 0; call < 3; ++call) f.rt->forward(p, d.operands(), s.get());
  } catch (...) {  // a capture left open would fail every later test's CUDA calls
    cudaStreamEndCapture(s.get(), &graph);
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  GT_CUDA_CALL(cudaStreamEndCapture(s.get(), &graph));
  std::size_t nodes = 0;
  GT_CUDA_CALL(cudaGraphGetNodes(graph, nullptr, &nodes));
  GT_CUDA_CALL(cudaGraphDestroy(graph));
  EXPECT_EQ(f.rt->call_graphs().graphs, 0u) << "the captured calls are the caller's graph's, not ours";
  EXPECT_GE(nodes, 3u) << "each of the three captured calls is in the caller's graph";
}

// A program that keeps making streams is told so at the stream past RuntimeOptions::max_stream_scratch, instead of
// taking another workspace each time.
TEST(RuntimeGpu, AStreamPastMaxStreamScratchIsRefusedWithTheOptionsName) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  RuntimeOptions o;
  o.confirm_standins = false;
  o.max_stream_scratch = 2;
  o.workspace_bytes = std::size_t{4} << 20;
  Runtime rt(dir.path("none.db"), 0, o);
  const GemmProblem p = make(64, 64, 64, "nn", OutputLayout::RowMajor, Activation::None, false, 0.f, MathMode::Tf32);
  const test::ProblemData d(p, 77);
  const CudaStream s1, s2, s3;
  rt.forward(p, d.operands(), s1.get());
  rt.forward(p, d.operands(), s2.get());
  rt.forward(p, d.operands(), s1.get());
  try {
    rt.forward(p, d.operands(), s3.get());
    ADD_FAILURE() << "a third stream was accepted with max_stream_scratch 2";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("RuntimeOptions::max_stream_scratch"), std::string::npos) << e.what();
  }
  GT_CUDA_CALL(cudaDeviceSynchronize());
  EXPECT_EQ(rt.stream_scratch().streams, 2u);
  EXPECT_GE(rt.stream_scratch().device_bytes, 2 * o.workspace_bytes);
}

// A call whose scratch would take the runtime past max_scratch_bytes throws MemoryBudgetError and enqueues nothing
// (its poisoned output stays poisoned); calls that need no more scratch still run.
TEST(RuntimeGpu, ACallPastTheScratchBudgetThrowsAndEnqueuesNothingWhileOthersStillRun) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  RuntimeOptions o;
  o.confirm_standins = false;
  o.workspace_bytes = std::size_t{4} << 20;
  o.max_scratch_bytes = std::size_t{6} << 20;  // one stream's workspace fits, a second's does not
  Runtime rt(dir.path("none.db"), 0, o);
  const GemmProblem p = make(64, 64, 64, "nn", OutputLayout::RowMajor, Activation::None, false, 0.f, MathMode::Tf32);
  const test::ProblemData d(p, 78);
  const CudaStream s1, s2;
  rt.forward(p, d.operands(), s1.get());
  s1.synchronize();
  GT_CUDA_CALL(cudaMemset(d.Y.get(), 0xff, d.Y.bytes()));  // NaN
  try {
    rt.forward(p, d.operands(), s2.get());
    ADD_FAILURE() << "a second stream's workspace was allocated past a 6 MiB budget";
  } catch (const MemoryBudgetError& e) {
    EXPECT_NE(std::string(e.what()).find("RuntimeOptions::max_scratch_bytes"), std::string::npos) << e.what();
  }
  GT_CUDA_CALL(cudaDeviceSynchronize());
  for (const float v : to_host(d.Y.get(), static_cast<std::size_t>(p.m * p.n)))
    ASSERT_TRUE(std::isnan(v)) << "the refused call wrote its output";
  rt.forward(p, d.operands(), s1.get());
  s1.synchronize();
  std::vector<double> y_ref;
  test::cpu_reference(d, y_ref, nullptr);
  EXPECT_LE(host_relative_error(to_host(d.Y.get(), y_ref.size()), y_ref), verification_tolerance(p));
  EXPECT_EQ(rt.stream_scratch().streams, 1u);
  EXPECT_LE(rt.stream_scratch().device_bytes, o.max_scratch_bytes);
}

// Runtime() with no db named reads and writes the default db (here XDG_CACHE_HOME's, whose directories the first
// flush makes), the one `gemmtune sweep --from-misses` tunes without --db.
TEST(RuntimeGpu, ARuntimeWithNoDbNamedRecordsItsMissesInTheDefaultDb) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  test::ScopedEnv env;
  env.unset("GEMMTUNE_DB").set("XDG_CACHE_HOME", dir.path("cache"));
  const std::string db = dir.path("cache") + "/gemmtune/gemmtune.db";
  EXPECT_EQ(default_db_path(), db);
  const GemmProblem p = make(200, 100, 50, "nn", OutputLayout::RowMajor, Activation::Relu, true, 0.f, MathMode::Tf32);
  std::string device_key;
  {
    RuntimeOptions o;
    o.confirm_standins = false;
    Runtime rt(0, o);
    device_key = rt.device_key();
    const test::ProblemData d(p, 4646);
    rt.forward(p, d.operands(), nullptr);
    GT_CUDA_CALL(cudaDeviceSynchronize());
    rt.flush();
  }
  const std::vector<std::string> misses = TuningDb(db, TuningDb::Access::ReadOnly).misses(device_key);
  ASSERT_EQ(misses.size(), 1u);
  EXPECT_EQ(misses.front(), p.key());
}

// The padded cuBLASLt candidates (lt/lt_padding.hpp): the heuristic's first algo on copies padded to 16-byte rows, then
// our epilogue kernel from the padded output, pinned on odd shapes (every layout then has a row to pad) in every
// layout and output layout, fp32 and tf32, with and without bias, activation, save_z and dropout: right against fp64.
// Then m and n aligned, k odd: where k is some operand's leading dimension, Y keeps its stored shape and cuBLASLt
// writes it in place (no epilogue launch at all without an epilogue). Called twice per problem, so the second call
// finds the rows past an operand's own still zero.
TEST(RuntimeGpu, PaddedCandidatesMatchTheFp64ReferenceInEveryLayoutAndEpilogue) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  const LtHandle lt = make_lt_handle();
  const CudaStream s;
  int checked = 0, in_place = 0;
  for (const bool odd : {true, false})
    for (MathMode mode : {MathMode::Tf32, MathMode::Fp32})
      for (const char* layout : {"nn", "nt", "tn", "tt"})
        for (OutputLayout out : {OutputLayout::RowMajor, OutputLayout::Transposed})
          for (int epilogue = 0; epilogue < 3; ++epilogue) {
            const GemmProblem p = make(odd ? 37 + 2 * checked : 40, odd ? 45 : 48, 29, layout, out,
                                       epilogue == 0 ? Activation::None : Activation::Gelu, epilogue > 0,
                                       epilogue == 2 ? 0.2f : 0.f, mode);
            const std::optional<LtPadding> pad = lt_padding(p);
            if (!odd && !pad) continue;  // k is no stored leading dimension in this layout: nothing to pad
            ASSERT_TRUE(pad) << p.key();
            in_place += pad->y.changes() ? 0 : 1;
            const std::vector<Candidate> first = LtGemm(lt.get(), p, LtEpilogueMode::Padded).heuristic(1, 64 << 20);
            ASSERT_EQ(first.size(), 1u) << p.key();
            ASSERT_TRUE(first[0].lt_padded) << first[0].id();
            Fixture f(dir.path("none.db"));
            f.rt->pin(p, first[0].id());
            const test::ProblemData d(p, static_cast<std::uint32_t>(3000 + checked));
            std::vector<double> y_ref, z_ref;
            test::cpu_reference(d, y_ref, p.epi.save_z ? &z_ref : nullptr);
            for (int call = 0; call < 2; ++call) {
              GT_CUDA_CALL(cudaMemsetAsync(d.Y.get(), 0xff, d.Y.bytes(), s.get()));
              f.rt->forward(p, d.operands(), s.get());
              s.synchronize();
              EXPECT_LE(host_relative_error(to_host(d.Y.get(), y_ref.size()), y_ref), verification_tolerance(p))
                  << f.rt->explain(p) << ", call " << call;
              if (p.epi.save_z) {
                EXPECT_LE(host_relative_error(to_host(d.Z.get(), z_ref.size()), z_ref), verification_tolerance(p))
                    << p.key();
              }
            }
            ++checked;
          }
  // Odd: every combination. Aligned m and n: the layouts where k is A's or B's leading dimension (nn, nt, tt).
  EXPECT_EQ(checked, 2 * 4 * 2 * 3 + 2 * 3 * 2 * 3);
  EXPECT_EQ(in_place, 2 * 3 * 2 * 3);
}

// Large enough that the bias reduction spans many row chunks, so its second stage and ticket reset are exercised;
// 3001x257 takes the scalar path, 3000x256 the 16-byte one. Row-major 300x16384 has more strips than one wave (132
// SMs) has places for two chunks of, so each strip's only block is also its last (k = 8 keeps the CPU reference short).
TEST(RuntimeGpu, TheBiasGradientIsBitwiseDeterministicAcrossCalls) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  Fixture f(dir.path("none.db"));
  const CudaStream s;
  std::vector<GemmProblem> problems;
  for (OutputLayout out : {OutputLayout::RowMajor, OutputLayout::Transposed}) {
    problems.push_back(make(3001, 257, 64, "nn", out, Activation::Gelu, true, 0.1f, MathMode::Tf32));
    problems.push_back(make(3000, 256, 64, "nn", out, Activation::Gelu, true, 0.1f, MathMode::Tf32));
    problems.push_back(make(300, 16384, 8, "nn", out, Activation::Gelu, true, 0.1f, MathMode::Tf32));
  }
  for (const GemmProblem& p : problems) {
    const std::size_t mn = static_cast<std::size_t>(p.m * p.n);
    const auto z = random_floats(mn, 11, -2.f, 2.f), gy = random_floats(mn, 12);
    const auto Z = to_device(z), gY = to_device(gy);
    DeviceBuffer<float> gBias(static_cast<std::size_t>(p.n));
    std::vector<std::vector<float>> results;
    for (int call = 0; call < 3; ++call) {
      test::poison(gBias);
      f.rt->backward(p, nullptr, nullptr, Z.get(), gY.get(), nullptr, nullptr, gBias.get(), s.get(), 5, 6);
      s.synchronize();
      results.push_back(to_host(gBias.get(), gBias.size()));
    }
    EXPECT_EQ(std::memcmp(results[0].data(), results[1].data(), results[0].size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(results[0].data(), results[2].data(), results[0].size() * sizeof(float)), 0);
    const BackwardReference ref = cpu_backward(p, std::vector<float>(static_cast<std::size_t>(p.m * p.k)),
                                               std::vector<float>(static_cast<std::size_t>(p.k * p.n)), z, gy, 5, 6);
    EXPECT_LE(host_relative_error(results[0], ref.gbias), 1e-5);
  }
}

// One layer's training step, forward and backward, captured once and replayed: the replay must give what the
// eager calls gave, and capturing proves the steady-state calls neither allocate nor synchronize.
TEST(RuntimeGpu, AGraphReplayOfAForwardBackwardStepGivesTheEagerResults) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  Fixture f(dir.path("none.db"));
  const CudaStream s;
  const GemmProblem p = make(96, 80, 48, "nt", OutputLayout::RowMajor, Activation::Gelu, true, 0.2f, MathMode::Tf32);
  test::ProblemData d(p, 77);
  const auto gy = random_floats(static_cast<std::size_t>(p.m * p.n), 78);
  const auto gY = to_device(gy);
  DeviceBuffer<float> gA(static_cast<std::size_t>(p.m * p.k)), gB(static_cast<std::size_t>(p.k * p.n)),
      gBias(static_cast<std::size_t>(p.n));
  const GemmOperands x = d.operands();
  const auto step = [&] {
    f.rt->forward(p, x, s.get());
    f.rt->backward(p, x.A, x.B, x.Z, gY.get(), gA.get(), gB.get(), gBias.get(), s.get(), x.seed, x.offset);
  };
  const auto outputs = [&] {
    s.synchronize();
    return std::vector<std::vector<float>>{to_host(d.Y.get(), d.Y.size()), to_host(gA.get(), gA.size()),
                                           to_host(gB.get(), gB.size()), to_host(gBias.get(), gBias.size())};
  };
  step();  // the warm-up call resolves the problems
  const auto eager = outputs();

  cudaGraph_t graph = nullptr;
  GT_CUDA_CALL(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeGlobal));
  step();
  GT_CUDA_CALL(cudaStreamEndCapture(s.get(), &graph));
  cudaGraphExec_t exec = nullptr;
  GT_CUDA_CALL(cudaGraphInstantiate(&exec, graph, 0));
  for (DeviceBuffer<float>* out : {&d.Y, &gA, &gB, &gBias}) test::poison(*out);
  GT_CUDA_CALL(cudaGraphLaunch(exec, s.get()));
  GT_CUDA_CALL(cudaGraphLaunch(exec, s.get()));
  const auto replay = outputs();
  GT_CUDA_CALL(cudaGraphExecDestroy(exec));
  GT_CUDA_CALL(cudaGraphDestroy(graph));

  for (std::size_t i = 0; i < eager.size(); ++i) {
    ASSERT_EQ(eager[i].size(), replay[i].size());
    const bool identical = std::memcmp(eager[i].data(), replay[i].data(), eager[i].size() * sizeof(float)) == 0;
    std::vector<double> reference(eager[i].begin(), eager[i].end());
    EXPECT_LE(host_relative_error(replay[i], reference), 1e-6) << "output " << i;
    std::printf("[ graph    ] output %zu: replay %s eager\n", i, identical ? "bitwise equals" : "is close to but not");
  }
}

TEST(RuntimeGpu, AFirstCallInsideACaptureIsRefusedWithAClearError) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  Fixture f(dir.path("none.db"));
  const CudaStream s;
  const GemmProblem p = make(64, 64, 64, "nn", OutputLayout::RowMajor, Activation::Relu, true, 0.f, MathMode::Tf32);
  const test::ProblemData d(p, 3);
  GT_CUDA_CALL(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeGlobal));
  std::string message;
  try {
    f.rt->forward(p, d.operands(), s.get());
  } catch (const InputError& e) {
    message = e.what();
  }
  cudaGraph_t graph = nullptr;
  GT_CUDA_CALL(cudaStreamEndCapture(s.get(), &graph));
  if (graph) GT_CUDA_CALL(cudaGraphDestroy(graph));
  EXPECT_NE(message.find("inside a CUDA graph capture"), std::string::npos) << message;
  f.rt->prepare(p);  // resolved outside the capture, the same call is now capturable
  GT_CUDA_CALL(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeGlobal));
  f.rt->forward(p, d.operands(), s.get());
  GT_CUDA_CALL(cudaStreamEndCapture(s.get(), &graph));
  ASSERT_NE(graph, nullptr);
  GT_CUDA_CALL(cudaGraphDestroy(graph));
}

class RuntimeCacheGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    GT_REQUIRE_GPU();
    device_key = query_device(0).identity.key();
  }

  // With a margin over heuristic-first of `margin` in two conditions (0: none known).
  CacheEntry entry(const GemmProblem& p, const Candidate& c, const std::string& key, double margin = 0) const {
    CacheEntry e = test::test_entry(key, p, 1, 10.0);
    e.candidate = c;
    if (margin > 0) e.evidence.conditions = {{"stream/warm", margin, 0.01}, {"graph/cold", margin, 0.01}};
    return e;
  }

  // The heuristic's answers for p (rank 1 where there is one, so a cache hit is told from the default).
  Candidate second_choice(const GemmProblem& p) const {
    const LtHandle h = make_lt_handle();
    const std::vector<Candidate> cands = LtGemm(h.get(), p).heuristic(2, std::size_t{64} << 20);
    return cands.back();
  }

  // The default options with the first-use trial on, warnings written to `warnings`.
  static RuntimeOptions with_trial(std::ostringstream& warnings) {
    RuntimeOptions o;
    o.confirm_standins = true;
    o.warnings = &warnings;
    return o;
  }

  // Runs p through rt and checks the result against the fp64 reference.
  void expect_correct(Runtime& rt, const GemmProblem& p) const {
    const CudaStream s;
    const test::ProblemData d(p, 99);
    rt.forward(p, d.operands(), s.get());
    s.synchronize();
    std::vector<double> y_ref;
    test::cpu_reference(d, y_ref, nullptr);
    EXPECT_LE(host_relative_error(to_host(d.Y.get(), y_ref.size()), y_ref), verification_tolerance(p)) << p.key();
  }

  test::ScratchDir dir;
  std::string device_key;
  std::string db = dir.path("cache.db");
};

TEST_F(RuntimeCacheGpu, ExactAndNearestEntriesAreUsedAndExplainedAndOnlyAnExactEntryHasASaving) {
  const GemmProblem tuned = make(256, 256, 256, "nn", OutputLayout::RowMajor, Activation::Gelu, true, 0.f, MathMode::Tf32);
  const Candidate c = second_choice(tuned);
  // An fp32 kind whose tuned shape chose one of our variants by x1.2 in every condition.
  const GemmProblem tuned_own = make(256, 256, 256, "nn", OutputLayout::RowMajor, Activation::None, false, 0.f, MathMode::Fp32);
  Candidate own;
  own.backend = Backend::Own;
  own.own_variant = "fp32_64x64x16_w32x32_t8x4_s2_split4";
  GemmProblem also_own = tuned_own;  // a second tuned shape that chose the same variant: they agree
  also_own.m = 224;
  TuningDb(db).merge_cache_entries(
      {entry(tuned, c, device_key), entry(tuned_own, own, device_key, 1.2), entry(also_own, own, device_key, 1.25)});
  Fixture f(db);
  EXPECT_EQ(f.rt->cache_size(), 3u);
  EXPECT_EQ(f.rt->candidate_id(tuned), c.id());
  EXPECT_NE(f.rt->explain(tuned).find("[exact] exact cache hit"), std::string::npos) << f.rt->explain(tuned);
  expect_correct(*f.rt, tuned);

  // A cuBLASLt algo does not stand in for a near shape: heuristic-first runs it.
  GemmProblem near = tuned;
  near.m = 240;
  const std::string why = f.rt->explain(near);
  EXPECT_NE(why.find("[default] cuBLASLt heuristic default"), std::string::npos) << why;
  EXPECT_NE(why.find("does not transfer"), std::string::npos) << why;
  EXPECT_EQ(f.rt->candidate_id(near), LtGemm(make_lt_handle().get(), near).heuristic(1, std::size_t{64} << 20)[0].id());
  expect_correct(*f.rt, near);

  GemmProblem near_own = tuned_own;
  near_own.m = 240;
  const std::string why_own = f.rt->explain(near_own);
  EXPECT_NE(why_own.find("[nearest] no exact entry; nearest tuned shape 256x256x256"), std::string::npos) << why_own;
  EXPECT_NE(why_own.find("x1.200"), std::string::npos) << why_own;
  EXPECT_EQ(f.rt->candidate_id(near_own), own.id());
  expect_correct(*f.rt, near_own);

  // What an exact entry saved over heuristic-first (10 us at x1.2: 2 us a call); nothing known without a margin, and
  // nothing for a problem that does not run its own exact entry.
  ASSERT_TRUE(f.rt->exact_entry_saving_us(tuned_own).has_value());
  EXPECT_NEAR(*f.rt->exact_entry_saving_us(tuned_own), 10.0 * 0.2, 1e-9);
  EXPECT_FALSE(f.rt->exact_entry_saving_us(tuned).has_value());
  EXPECT_FALSE(f.rt->exact_entry_saving_us(near_own).has_value());
  EXPECT_FALSE(f.rt->exact_entry_saving_us(near).has_value());
  EXPECT_EQ(f.warnings.str(), "");
}

// With RuntimeOptions::confirm_standins the stand-in is timed against heuristic-first on the real problem at first
// use, and whichever is kept, explain() gives both times and the result is right.
TEST_F(RuntimeCacheGpu, AFirstUseTrialDecidesAStandInAndExplainsItsTimes) {
  const GemmProblem tuned = make(512, 512, 512, "nn", OutputLayout::RowMajor, Activation::Gelu, true, 0.f, MathMode::Tf32);
  Candidate own;
  own.backend = Backend::Own;
  own.own_variant = "fp32_64x64x16_w32x32_t8x4_s2_split4";  // an fp32 variant cannot run tf32: the trial's kind is fp32
  GemmProblem tuned_fp32 = tuned;
  tuned_fp32.mode = MathMode::Fp32;
  TuningDb(db).merge_cache_entries({entry(tuned_fp32, own, device_key, 1.03)});
  std::ostringstream warnings;
  Runtime rt(db, 0, with_trial(warnings));
  GemmProblem near = tuned_fp32;
  near.m = 500;
  rt.prepare(near);
  const std::string why = rt.explain(near);
  EXPECT_NE(why.find("first-use trial on this problem: "), std::string::npos) << why;
  EXPECT_NE(why.find(" us per call (slowest batch "), std::string::npos) << why;
  EXPECT_NE(why.find(") vs heuristic-first "), std::string::npos) << why;
  EXPECT_NE(why.find(" us (fastest batch "), std::string::npos) << why;
  EXPECT_NE(why.find("slowest batch was held against heuristic-first's fastest over the "), std::string::npos) << why;
  // Not kept, the stand-in leaves the problem to the no-entry set: heuristic-first or whichever of its challengers
  // (the +bias form, at 500x512x512 on the H200 once its gelu pass ran in PyTorch's launch shape) beat it.
  if (rt.candidate_id(near) == own.id())
    EXPECT_NE(why.find("[nearest]"), std::string::npos) << why;
  else
    EXPECT_NE(why.find("[default] cuBLAS"), std::string::npos) << why;
  expect_correct(rt, near);

  // The tuned shape itself is an exact hit: nothing is put to a trial, whatever the default.
  const std::string exact = rt.explain(tuned_fp32);
  EXPECT_NE(exact.find("[exact]"), std::string::npos) << exact;
  EXPECT_EQ(exact.find("first-use trial"), std::string::npos) << exact;
  EXPECT_EQ(rt.candidate_id(tuned_fp32), own.id());
  EXPECT_EQ(warnings.str(), "");
}

// With RuntimeOptions::confirm_standins an untuned problem whose default is cuBLASLt's fused epilogue puts the plain
// GEMM followed by our epilogue kernel against it; whichever is kept, explain() gives both times and the result is
// right. A problem without an epilogue has nothing to take apart, and without the option nothing is tried.
TEST_F(RuntimeCacheGpu, AFirstUseTrialPutsThePlainGemmAndOurEpilogueAgainstAFusedDefault) {
  // A shape where the fused GELU_BIAS call ran 1.6x the plain GEMM on the H200 (328x1816x136 tf32).
  const GemmProblem fused =
      make(328, 1816, 136, "nn", OutputLayout::RowMajor, Activation::Gelu, true, 0.f, MathMode::Tf32);
  const GemmProblem plain =
      make(328, 1816, 136, "nn", OutputLayout::RowMajor, Activation::None, false, 0.f, MathMode::Tf32);
  std::ostringstream warnings;
  Runtime rt(db, 0, with_trial(warnings));
  rt.prepare(fused);
  const std::string why = rt.explain(fused);
  EXPECT_NE(why.find("[default] "), std::string::npos) << why;
  EXPECT_NE(why.find("first-use trial on this problem: "), std::string::npos) << why;
  EXPECT_NE(why.find(") vs heuristic-first "), std::string::npos) << why;
  const std::string id = rt.candidate_id(fused);
  if (id.size() > 4 && id.compare(id.size() - 4, 4, "+epi") == 0)
    EXPECT_NE(why.find("then our epilogue kernel: faster than its fused epilogue"), std::string::npos) << why;
  else
    EXPECT_NE(why.find("(the plain GEMM, then our epilogue kernel) "), std::string::npos) << why;
  expect_correct(rt, fused);

  // Without an epilogue there is nothing to take apart; cuBLAS's own choice still challenges the default.
  rt.prepare(plain);
  const std::string plain_why = rt.explain(plain);
  EXPECT_EQ(plain_why.find("(the plain GEMM, then our epilogue kernel)"), std::string::npos) << plain_why;
  EXPECT_NE(plain_why.find("cublas/sgemm"), std::string::npos) << plain_why;
  expect_correct(rt, plain);

  RuntimeOptions no_trial;
  no_trial.confirm_standins = false;
  Runtime untried(db, 0, no_trial);
  EXPECT_EQ(untried.explain(fused).find("first-use trial"), std::string::npos) << untried.explain(fused);
  EXPECT_EQ(warnings.str(), "");
}

// A decode-sized problem with no db at all: nothing was measured, yet the trial times the skinny variants made for its
// class beside what cuBLAS and cuBLASLt offer (selection.hpp), says so, and whichever it keeps runs right. The whole-k
// tile is among them: last in its list, the trial never reached it (held-out seed 9731, H200: cuBLAS kept at
// 14x2048x400, torch.compile 0.69-0.75x ours; second, the trial kept it, 1.03-1.21x). So is the k split over a
// cluster, first in FFMA's list (results/nvidia-h200/decode_cluster_k_sweep.txt), where the GPU has clusters; where
// it has none, the list's next tile.
TEST_F(RuntimeCacheGpu, ADecodeSizedFirstUseWithoutADbTimesTheSkinnyVariants) {
  const GemmProblem p = make(8, 2048, 352, "nn", OutputLayout::RowMajor, Activation::None, false, 0.f, MathMode::Fp32);
  std::ostringstream warnings;
  Runtime rt(db, 0, with_trial(warnings));
  rt.prepare(p);
  const std::string why = rt.explain(p);
  EXPECT_NE(why.find("the skinny variants, made for decode-sized m"), std::string::npos) << why;
  const kernels::KernelVariant* cluster_k = kernels::find_kernel_variant("skinny_fp32_8x64x64_s4_c16");
  ASSERT_NE(cluster_k, nullptr);
  const char* first_ffma = cluster_k->device_unsupported_reason().empty() ? "own/skinny_fp32_8x64x64_s4_c16"
                                                                          : "own/skinny_fp32_8x128x32_s4";
  for (const char* v : {first_ffma, "own/skinny_stream_fp32_8x128x128_s4", "own/skinny_fp32_8x32x128_s4_wholek",
                        "cublas/sgemm"})
    EXPECT_NE(why.find(v), std::string::npos) << v << ": " << why;
  expect_correct(rt, p);
  EXPECT_EQ(warnings.str(), "");
}

// An exact entry that is one of what the runtime tries without an entry (here heuristic-first itself) says only that
// the sweep saw it win among near-ties on its own operands: with the trial on, a first-use trial on the program's
// problem decides between the same candidates, and the entry counts as run only where it still runs. Without the
// trial the entry runs as it is.
TEST_F(RuntimeCacheGpu, AnExactEntryOfTheNoEntrySetIsDecidedByAFirstUseTrial) {
  const GemmProblem p = make(328, 1816, 136, "nn", OutputLayout::RowMajor, Activation::Gelu, true, 0.f, MathMode::Tf32);
  const Candidate first = LtGemm(make_lt_handle().get(), p).heuristic(1, std::size_t{64} << 20)[0];
  TuningDb(db).merge_cache_entries({entry(p, first, device_key, 1.0)});
  std::ostringstream warnings;
  Runtime rt(db, 0, with_trial(warnings));
  rt.prepare(p);
  const std::string why = rt.explain(p);
  EXPECT_NE(why.find("[exact] exact cache hit"), std::string::npos) << why;
  EXPECT_NE(why.find("it is one of what the runtime tries without an entry, so a first-use trial on this problem "
                     "decided: "),
            std::string::npos)
      << why;
  EXPECT_NE(why.find(") vs heuristic-first "), std::string::npos) << why;
  EXPECT_EQ(rt.runs_exact_entry(p), rt.candidate_id(p) == first.id()) << why;
  expect_correct(rt, p);

  Fixture untried(db);
  EXPECT_EQ(untried.rt->explain(p).find("first-use trial"), std::string::npos) << untried.rt->explain(p);
  EXPECT_EQ(untried.rt->candidate_id(p), first.id());
  EXPECT_TRUE(untried.rt->runs_exact_entry(p));
  EXPECT_EQ(warnings.str(), "");
}

// The sweep keeps heuristic-first unless a challenger beats it by 6% against a split-k algo, where a runtime with no db
// keeps an own variant that beats it by 1% in the program's workspace: at 2x4096x768 tf32 (held-out seed 9725, H200)
// the entry ran 0.894x no entry. The trial of such an entry now times the own variants the sweep timed faster than
// heuristic-first at that shape, and leaves out the slower ones; whichever runs is right.
TEST_F(RuntimeCacheGpu, AnExactHeuristicFirstEntrysTrialAlsoTimesTheOwnVariantsTheSweepTimedFasterThere) {
  const GemmProblem p = make(2, 4096, 768, "nn", OutputLayout::RowMajor, Activation::None, false, 0.f, MathMode::Tf32);
  const Candidate first = LtGemm(make_lt_handle().get(), p).heuristic(1, std::size_t{64} << 20)[0];
  const char* faster = "skinny_mma_tf32_8x128x32_s4";
  const char* slower = "skinny_tf32_16x128x64_s4";
  for (const char* v : {faster, slower}) ASSERT_NE(kernels::find_kernel_variant(v), nullptr) << v;
  std::vector<MeasurementRecord> records = {test::lt_record(p, 5, 9.04), test::own_record(p, faster, 7.90),
                                            test::own_record(p, slower, 12.0)};
  records[0].candidate = first;
  ASSERT_EQ(first.heuristic_rank, 0);
  {
    TuningDb tuning(db);
    const CacheDecision keep_heuristic_first{&records[0], {}};
    tuning.store_problem(tuning.begin_run(test::test_run(query_device(0).identity)), p, records, &keep_heuristic_first);
  }
  std::ostringstream warnings;
  Runtime rt(db, 0, with_trial(warnings));
  rt.prepare(p);
  const std::string why = rt.explain(p);
  EXPECT_NE(why.find("[exact] exact cache hit"), std::string::npos) << why;
  EXPECT_NE(why.find("first-use trial on this problem decided: "), std::string::npos) << why;
  EXPECT_NE(why.find(std::string("own/") + faster + " (the sweep timed it x1.14 over heuristic-first at this shape)"),
            std::string::npos)
      << why;
  EXPECT_EQ(why.find(slower), std::string::npos) << why;
  EXPECT_EQ(rt.runs_exact_entry(p), rt.candidate_id(p) == first.id()) << why;
  expect_correct(rt, p);
  EXPECT_EQ(warnings.str(), "");
}

// An own entry whose sweep timed another own variant within 10% of it is put to a first-use trial beside that near-tie
// (the two trade warm against cold: seed 9725's 2x4096x768 bias+gelu fp32 ran 0.950x no entry); a variant further off
// is left out, and an entry with no near-tie runs as it is, untried.
TEST_F(RuntimeCacheGpu, AnOwnEntrysTrialTimesTheNearTiesTheSweepTimedBesideItAndNoneFurtherOff) {
  const GemmProblem p = make(2, 4096, 768, "nn", OutputLayout::RowMajor, Activation::Gelu, true, 0.f, MathMode::Fp32);
  const GemmProblem alone =
      make(2, 4096, 768, "nn", OutputLayout::RowMajor, Activation::None, false, 0.f, MathMode::Fp32);
  const char* kept = "skinny_fp32_8x128x64_s4";
  const char* near = "skinny_fp32_8x128x32_s3";
  const char* far = "skinny_stream_fp32_8x128x128_s4";
  for (const char* v : {kept, near, far}) ASSERT_NE(kernels::find_kernel_variant(v), nullptr) << v;
  {
    TuningDb tuning(db);
    const std::int64_t run = tuning.begin_run(test::test_run(query_device(0).identity));
    for (const GemmProblem& q : {p, alone}) {
      std::vector<MeasurementRecord> records = {test::lt_record(q, 5, 19.07), test::own_record(q, kept, 8.58),
                                                test::own_record(q, far, 12.0)};
      if (q == p) records.push_back(test::own_record(q, near, 8.90));
      records[0].candidate = LtGemm(make_lt_handle().get(), q).heuristic(1, std::size_t{64} << 20)[0];
      const CacheDecision keep{&records[1], {{{"stream/warm", 1.3, 0.03}, {"graph/cold", 2.0, 0.03}}}};
      tuning.store_problem(run, q, records, &keep);
    }
  }
  std::ostringstream warnings;
  Runtime rt(db, 0, with_trial(warnings));
  rt.prepare(p);
  const std::string why = rt.explain(p);
  EXPECT_NE(why.find("[exact] exact cache hit"), std::string::npos) << why;
  EXPECT_NE(why.find("the sweep timed other own variants within 10% of it at this shape, so a first-use trial on "
                     "this problem decided: "),
            std::string::npos)
      << why;
  EXPECT_NE(why.find(std::string("own/") + near + " (the sweep timed it x2.14 over heuristic-first"), std::string::npos)
      << why;
  EXPECT_EQ(why.find(far), std::string::npos) << why;
  EXPECT_EQ(why.find("cublas/sgemm"), std::string::npos) << "the sweep's finalist stage settled the no-entry set: "
                                                          << why;
  const std::string runs = rt.candidate_id(p);
  EXPECT_TRUE(runs == std::string("own/") + kept || runs == std::string("own/") + near) << why;
  EXPECT_EQ(rt.runs_exact_entry(p), runs == std::string("own/") + kept) << why;
  expect_correct(rt, p);

  rt.prepare(alone);
  EXPECT_EQ(rt.explain(alone).find("first-use trial"), std::string::npos) << rt.explain(alone);
  EXPECT_EQ(rt.candidate_id(alone), std::string("own/") + kept);
  EXPECT_TRUE(rt.runs_exact_entry(alone));
  EXPECT_EQ(warnings.str(), "");
}

// Issue 37: one process resolving untuned problems one after another, with the first-use trial and CUDA's default
// (lazy) module loading, had three first calls wait out the blocking kernel's 10 s timeout (7x5632x823 fp32 none,
// 86x1536x488 tf32 none and bias+gelu). Every side of a trial now runs once before anything waits behind that kernel;
// a timeout would also be a warning. explain() says what each first use cost.
TEST_F(RuntimeCacheGpu, FirstUsesOfManyUntunedProblemsNeverWaitForTheBlockingKernel) {
  RuntimeOptions o;
  std::ostringstream warnings;
  o.warnings = &warnings;
  Runtime rt(db, 0, o);
  int tried = 0;
  for (const MathMode mode : {MathMode::Fp32, MathMode::Tf32})
    for (const bool epilogue : {false, true})
      for (const auto& [m, n, k] : {std::array<std::int64_t, 3>{7, 5632, 823}, {86, 1536, 488}, {333, 2048, 769},
                                    {1, 768, 3072}, {1500, 1100, 300}}) {
        const Activation act = epilogue ? Activation::Gelu : Activation::None;
        const GemmProblem p = make(m, n, k, "nn", OutputLayout::RowMajor, act, epilogue, 0.f, mode);
        const auto t0 = std::chrono::steady_clock::now();
        rt.prepare(p);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        EXPECT_LT(ms, 2000) << p.key() << ": " << rt.explain(p);
        if (rt.explain(p).find("first-use trial") == std::string::npos) continue;
        ++tried;
        EXPECT_NE(rt.explain(p).find("this first use took "), std::string::npos) << rt.explain(p);
      }
  EXPECT_GT(tried, 0) << "the problems with an epilogue put the plain GEMM to a trial";
  EXPECT_EQ(warnings.str(), "");
  expect_correct(rt, make(86, 1536, 488, "nn", OutputLayout::RowMajor, Activation::Gelu, true, 0.f, MathMode::Tf32));
}

// A split-k variant's partial tiles live in the runtime's shared workspace and its tickets in its plan: two plans of
// one variant (an exact and a nearest problem) take turns on the stream, and a captured forward replays bit for bit.
TEST_F(RuntimeCacheGpu, ASplitKVariantRunsInTheSharedWorkspaceAndReplaysInAGraphBitForBit) {
  const GemmProblem tuned = make(256, 256, 256, "nn", OutputLayout::RowMajor, Activation::Gelu, true, 0.f, MathMode::Fp32);
  Candidate c;
  c.backend = Backend::Own;
  c.own_variant = "fp32_64x64x16_w32x32_t8x4_s2_split4";
  GemmProblem also_tuned = tuned;  // a second tuned shape that chose the variant, so the two vouch for it at m = 200
  also_tuned.m = 224;
  TuningDb(db).merge_cache_entries({entry(tuned, c, device_key, 1.2), entry(also_tuned, c, device_key, 1.2)});
  Fixture f(db);
  GemmProblem near = tuned;
  near.m = 200;
  ASSERT_EQ(f.rt->candidate_id(tuned), c.id());
  ASSERT_EQ(f.rt->candidate_id(near), c.id());
  for (const GemmProblem& p : {tuned, near, tuned}) expect_correct(*f.rt, p);

  const CudaStream s;
  test::ProblemData d(tuned, 5);
  f.rt->forward(tuned, d.operands(), s.get());
  s.synchronize();
  const std::vector<float> eager = to_host(d.Y.get(), d.Y.size());
  cudaGraph_t graph = nullptr;
  GT_CUDA_CALL(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeGlobal));
  f.rt->forward(tuned, d.operands(), s.get());
  GT_CUDA_CALL(cudaStreamEndCapture(s.get(), &graph));
  cudaGraphExec_t exec = nullptr;
  GT_CUDA_CALL(cudaGraphInstantiate(&exec, graph, 0));
  test::poison(d.Y);
  GT_CUDA_CALL(cudaGraphLaunch(exec, s.get()));
  GT_CUDA_CALL(cudaGraphLaunch(exec, s.get()));
  s.synchronize();
  GT_CUDA_CALL(cudaGraphExecDestroy(exec));
  GT_CUDA_CALL(cudaGraphDestroy(graph));
  EXPECT_EQ(to_host(d.Y.get(), d.Y.size()), eager);
  EXPECT_EQ(f.warnings.str(), "");
}

// RuntimeOptions::workspace: a cuBLASLt algo that needs workspace runs in the caller's buffer (its poison is
// overwritten) and right; a host pointer is refused before anything runs.
TEST_F(RuntimeCacheGpu, ALentWorkspaceIsWhereCuBLASLtWorksAndAHostPointerIsRefused) {
  const GemmProblem p = make(64, 96, 8192, "nn", OutputLayout::RowMajor, Activation::None, false, 0.f, MathMode::Fp32);
  const LtHandle h = make_lt_handle();
  const LtGemm gemm(h.get(), p);
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  std::optional<Candidate> needs_workspace;
  for (const Candidate& c : gemm.heuristic(16, kBytes)) {
    std::size_t needed = 0;
    if (gemm.check(gemm.make_algo(c.lt), kBytes, &needed).empty() && needed > 0) {
      needs_workspace = c;
      break;
    }
  }
  ASSERT_TRUE(needs_workspace) << "no heuristic algo of " << p.key() << " uses workspace";

  DeviceBuffer<unsigned char> lent(kBytes);
  GT_CUDA_CALL(cudaMemset(lent.get(), 0xff, lent.size()));
  RuntimeOptions o;
  o.workspace = lent.get();
  o.workspace_bytes = lent.size();
  Runtime rt(dir.path("none.db"), 0, o);
  rt.pin(p, needs_workspace->id());
  expect_correct(rt, p);
  std::vector<unsigned char> after(4096);
  GT_CUDA_CALL(cudaMemcpy(after.data(), lent.get(), after.size(), cudaMemcpyDeviceToHost));
  EXPECT_TRUE(std::any_of(after.begin(), after.end(), [](unsigned char b) { return b != 0xff; }))
      << needs_workspace->id() << " left the lent workspace untouched";

  std::vector<unsigned char> host(1024);
  o.workspace = host.data();
  try {
    Runtime refused(dir.path("none.db"), 0, o);
    ADD_FAILURE() << "a host pointer was accepted as the workspace";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("must be device memory"), std::string::npos) << e.what();
  }
}

TEST_F(RuntimeCacheGpu, ATrialOfNoCandidatesIsRefusedAtConstruction) {
  RuntimeOptions o;
  o.max_trial_candidates = 0;
  try {
    Runtime refused(dir.path("none.db"), 0, o);
    ADD_FAILURE() << "max_trial_candidates 0 was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("max_trial_candidates must be at least 1"), std::string::npos) << e.what();
  }
}

TEST_F(RuntimeCacheGpu, EntriesWhoseAlgoNoLongerAppliesFallBackCleanly) {
  const GemmProblem lt_problem = make(128, 96, 64, "nn", OutputLayout::RowMajor, Activation::Relu, true, 0.f, MathMode::Tf32);
  const GemmProblem own_problem = make(128, 96, 64, "nn", OutputLayout::RowMajor, Activation::None, false, 0.f, MathMode::Tf32x3);
  Candidate made_up = Candidate::parse_id("lt/a9999-t18-s8-k1-r0-w0-c0-cl0-i0");
  Candidate gone = Candidate::parse_id("own/tf32x3_no_such_variant");
  TuningDb(db).merge_cache_entries({entry(lt_problem, made_up, device_key), entry(own_problem, gone, device_key)});
  Fixture f(db);
  const std::string lt_why = f.rt->explain(lt_problem);
  EXPECT_NE(lt_why.find("[default]"), std::string::npos) << lt_why;
  EXPECT_NE(lt_why.find("the exact entry " + made_up.id() + " no longer applies"), std::string::npos) << lt_why;
  expect_correct(*f.rt, lt_problem);
  const std::string own_why = f.rt->explain(own_problem);
  EXPECT_NE(own_why.find("no kernel variant named 'tf32x3_no_such_variant' in this build"), std::string::npos) << own_why;
  expect_correct(*f.rt, own_problem);
}

TEST_F(RuntimeCacheGpu, AnotherDevicesEntriesAreIgnoredWithOneWarning) {
  const GemmProblem p = make(256, 256, 256, "nn", OutputLayout::RowMajor, Activation::None, true, 0.f, MathMode::Tf32);
  const std::string other = test::test_device("NVIDIA Some Other GPU").key();
  TuningDb(db).merge_cache_entries({entry(p, second_choice(p), other), entry(make(512, 512, 512, "nn",
      OutputLayout::RowMajor, Activation::None, true, 0.f, MathMode::Tf32), second_choice(p), other)});
  Fixture f(db);
  const std::string w = f.warnings.str();
  EXPECT_EQ(std::count(w.begin(), w.end(), '\n'), 1) << w;
  EXPECT_NE(w.find("ignoring 2 cache entries"), std::string::npos) << w;
  EXPECT_NE(w.find(other), std::string::npos) << w;
  EXPECT_EQ(f.rt->cache_size(), 0u);
  const std::string why = f.rt->explain(p);
  EXPECT_NE(why.find("[default]"), std::string::npos) << why;
  EXPECT_NE(why.find("2 of other devices ignored"), std::string::npos) << why;
}

TEST_F(RuntimeCacheGpu, AMissingDbRunsDefaultsAndTheDestructorRecordsTheMisses) {
  const GemmProblem p = make(200, 100, 50, "tn", OutputLayout::Transposed, Activation::Tanh, true, 0.f, MathMode::Fp32);
  {
    Fixture f(db);
    EXPECT_NE(f.rt->explain(p).find("was not found"), std::string::npos) << f.rt->explain(p);
    f.rt->prepare_backward(p);
    expect_correct(*f.rt, p);
  }
  const std::vector<std::string> misses = TuningDb(db, TuningDb::Access::ReadOnly).misses(device_key);
  EXPECT_EQ(misses.size(), 3u);
  for (const GemmProblem& q : {p, backward_problem(p, Pass::GradA), backward_problem(p, Pass::GradB)})
    EXPECT_NE(std::find(misses.begin(), misses.end(), q.key()), misses.end()) << q.key();
}

}  // namespace
}  // namespace gemmtune
