// runtime_bench: the runtime's figures of merit, measured in one process on one GPU (scripts/bench_runtime.sh runs
// it after tuning a db):
//   forward   runtime with the tuned cache vs cuBLASLt's heuristic-first algo with the same fused epilogue
//   backward  the runtime's fused backward vs the unfused chain a cuBLASLt user writes: a separate act' kernel and
//             three cuBLASLt GEMMs (gA, gB, and gBias = 1ᵀ·gZ as the bias reduction), heuristic-first each
//   overhead  host time of one runtime call vs one raw cublasLtMatmul of the same algo, the GPU held busy, paired
//             batch by batch (the median of per-round differences);
//             and the cost of the per-call cache lookup; the same for a runtime call of one of our kernels against
//             that kernel's own launch
//
// Timing: per round, one batch of 20 back-to-back calls of each side (order alternating between rounds), queued
// behind a blocking kernel so host launch latency stays out, inputs rotating over sets larger than 2× L2; CUDA
// events around each batch; the median over 15 rounds. Both sides see the same inputs and the same clock.
//
//   runtime_bench --db FILE [--profile NAME|FILE] [--json OUT] [--prepare-only] [--forward-only] [--fp32-equivalent]
// --prepare-only resolves every problem the benchmark uses and records the misses (the backward GEMMs a profile
// does not list), so `gemmtune sweep --from-misses` can tune them before the measured run.
// --forward-only skips the backward cases; --fp32-equivalent lets the runtime use the cache entries the
// fp32-equivalent policy admitted (RuntimeOptions::fp32_equivalent).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/json_fields.hpp"
#include "cuda/device_info.hpp"
#include "cuda/stream.hpp"
#include "gemmtune/runtime.hpp"
#include "kernels/epilogue.cuh"
#include "kernels/launch_scratch.hpp"
#include "kernels/registry.hpp"
#include "launch/blocking_kernel.hpp"
#include "launch/candidate_launcher.hpp"
#include "launch/problem_buffers.hpp"
#include "launch/random_fill.hpp"
#include "lt/lt_gemm.hpp"
#include "problem/pass_gemm.hpp"
#include "profile/sweep_profile.hpp"

namespace gemmtune {
namespace {

using nlohmann::json;

constexpr std::size_t kWorkspace = std::size_t{64} << 20;
constexpr int kBatchCalls = 20;
constexpr int kRounds = 15;
constexpr std::int64_t kBackwardMaxDim = 2048;  // the backward target is over shapes up to 2048

struct Args {
  std::string db;
  std::string profile = "runtime_bench";
  std::string json_path;
  bool prepare_only = false;
  bool forward_only = false;
  bool fp32_equivalent = false;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

double geomean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::log(x);
  return v.empty() ? 0 : std::exp(s / static_cast<double>(v.size()));
}

struct PairTimes {
  double a_us = 0, b_us = 0;
};

// Median per-call microseconds of two alternatives, measured as the header says. run_a(i), run_b(i) enqueue call i.
template <typename RunA, typename RunB>
PairTimes time_pair(RunA&& run_a, RunB&& run_b, cudaStream_t s, BlockingKernel& blocker) {
  for (int i = 0; i < 5; ++i) {
    run_a(i);
    run_b(i);
  }
  GT_CUDA_CALL(cudaStreamSynchronize(s));
  const CudaEvent e0, e1, e2;
  std::vector<double> ta, tb;
  for (int round = 0; round < kRounds; ++round) {
    const bool a_first = round % 2 == 0;
    blocker.block(s);
    e0.record(s);
    for (int i = 0; i < kBatchCalls; ++i) a_first ? run_a(i) : run_b(i);
    e1.record(s);
    for (int i = 0; i < kBatchCalls; ++i) a_first ? run_b(i) : run_a(i);
    e2.record(s);
    blocker.release();
    GT_CUDA_CALL(cudaStreamSynchronize(s));
    const double first = 1000.0 * e1.elapsed_ms_since(e0) / kBatchCalls;
    const double second = 1000.0 * e2.elapsed_ms_since(e1) / kBatchCalls;
    ta.push_back(a_first ? first : second);
    tb.push_back(a_first ? second : first);
  }
  return {median(ta), median(tb)};
}

Candidate heuristic_first_candidate(const GemmProblem& p, cublasLtHandle_t h) {
  const std::vector<Candidate> c = LtGemm(h, pass_gemm(p), LtEpilogueMode::PreferFused).heuristic(1, kWorkspace);
  if (c.empty()) throw CheckError("cuBLASLt's heuristic has no algo for " + p.key());
  return c[0];
}

// cuBLASLt's first heuristic answer for p (a GEMM of any pass), as a launcher with its own workspace.
CandidateLauncher heuristic_first(const GemmProblem& p, cublasLtHandle_t h) {
  return CandidateLauncher(p, heuristic_first_candidate(p, h), h, kWorkspace);
}

std::uint64_t fresh_seed() { return (std::uint64_t{std::random_device{}()} << 32) | std::random_device{}(); }

GemmProblem with_z(GemmProblem p) {
  p.epi.save_z = true;
  return p;
}

bool backward_size(const GemmProblem& p) { return std::max({p.m, p.n, p.k}) <= kBackwardMaxDim; }

// The forward's heuristic-first runs in the workspace lent to the runtime: where a workspace lies moves some cuBLASLt
// algos by up to 6% on the H200, which is no part of either side's choice.
json forward_case(Runtime& rt, const GemmProblem& p, cublasLtHandle_t h, BorrowedWorkspace runtime_workspace,
                  std::size_t l2, cudaStream_t s, BlockingKernel& blocker) {
  const ProblemBuffers buffers(p, l2, fresh_seed(), s);
  const CandidateLauncher base(p, heuristic_first_candidate(p, h), h, runtime_workspace);
  rt.prepare(p);
  const PairTimes t = time_pair([&](int i) { rt.forward(p, buffers.operands(i), s); },
                                [&](int i) { base.launch(buffers.operands(i), s); }, s, blocker);
  const std::string chosen = rt.candidate_id(p);
  return {{"problem", p.key()},          {"runtime_candidate", chosen}, {"runtime_choice", rt.explain(p)},
          {"heuristic_candidate", base.candidate().id()}, {"same_algo", chosen == base.candidate().id()},
          {"runtime_us", t.a_us},        {"heuristic_us", t.b_us},      {"speedup", t.b_us / t.a_us}};
}

// The unfused chain's elementwise kernel: gZ = gY ⊙ act'(Z), what a framework's activation backward launches.
__global__ void activation_backward_kernel(const float* gy, const float* z, float* gz, std::int64_t count,
                                           Activation act, float slope) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::int64_t{gridDim.x} * blockDim.x)
    gz[i] = gy[i] * kernels::activation_derivative<float>(act, z[i], slope);
}

__global__ void fill_ones_kernel(float* p, std::int64_t count) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::int64_t{gridDim.x} * blockDim.x)
    p[i] = 1.0f;
}

json backward_case(Runtime& rt, Runtime& serial, const GemmProblem& p, cublasLtHandle_t h, std::size_t l2,
                   int sm_count, cudaStream_t s, BlockingKernel& blocker) {
  const std::uint64_t seed = fresh_seed();
  const ProblemBuffers buffers(p, l2, seed, s);
  const auto mn = static_cast<std::size_t>(p.m * p.n);
  // Z and gY are inputs of the backward: one of each per input set, Z from the forward on that set.
  std::vector<DeviceBuffer<float>> z, gy;
  for (int i = 0; i < buffers.sets(); ++i) {
    z.emplace_back(mn);
    gy.emplace_back(mn);
    GemmOperands x = buffers.operands(i);
    x.Z = z.back().get();
    rt.forward(p, x, s);
    fill_uniform(gy.back().get(), mn, seed + 100 + static_cast<std::uint64_t>(i), -1.f, 1.f, s);
  }
  DeviceBuffer<float> ga(static_cast<std::size_t>(p.m * p.k)), gb(static_cast<std::size_t>(p.k * p.n)),
      gbias(static_cast<std::size_t>(p.n)), gz(mn), ones(static_cast<std::size_t>(p.m));
  fill_ones_kernel<<<64, 256, 0, s>>>(ones.get(), p.m);
  GT_CUDA_CHECK_LAUNCH();

  const CandidateLauncher lt_a = heuristic_first(backward_problem(p, Pass::GradA), h);
  const CandidateLauncher lt_b = heuristic_first(backward_problem(p, Pass::GradB), h);
  GemmProblem bias_sum;  // gBias (1×n) = 1ᵀ (1×m) · gZ (m×n)
  bias_sum.m = 1;
  bias_sum.n = p.n;
  bias_sum.k = p.m;
  bias_sum.mode = p.mode;
  const CandidateLauncher lt_bias = heuristic_first(bias_sum, h);
  const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>((p.m * p.n + 255) / 256, 8 * sm_count));

  rt.prepare_backward(p);
  serial.prepare_backward(p);
  const auto z_of = [&](int i) { return z[static_cast<std::size_t>(i % buffers.sets())].get(); };
  const auto gy_of = [&](int i) { return gy[static_cast<std::size_t>(i % buffers.sets())].get(); };
  const auto fused_on = [&](Runtime& r, int i, float* grad_a, float* grad_b) {
    const GemmOperands x = buffers.operands(i);
    r.backward(p, x.A, x.B, z_of(i), gy_of(i), grad_a, grad_b, gbias.get(), s);
  };
  const auto act_kernel = [&](int i) {
    activation_backward_kernel<<<blocks, 256, 0, s>>>(gy_of(i), z_of(i), gz.get(), p.m * p.n, p.epi.act,
                                                      p.epi.leaky_slope);
  };
  const auto bias_gemm = [&] {
    GemmOperands bx;
    bx.A = ones.get();
    bx.B = gz.get();
    bx.Y = gbias.get();
    lt_bias.launch(bx, s);
  };
  const auto unfused = [&](int i) {
    const GemmOperands x = buffers.operands(i);
    act_kernel(i);
    lt_a.launch(pass_gemm_operands(Pass::GradA, x.A, x.B, gz.get(), ga.get()), s);
    lt_b.launch(pass_gemm_operands(Pass::GradB, x.A, x.B, gz.get(), gb.get()), s);
    bias_gemm();
  };
  const PairTimes t = time_pair([&](int i) { fused_on(rt, i, ga.get(), gb.get()); }, unfused, s, blocker);
  // Where the time goes: the fused chain with its GEMMs one after the other, and its pass alone; the unfused
  // chain's act' kernel and bias-reduction GEMM alone.
  const PairTimes fused_parts = time_pair([&](int i) { fused_on(serial, i, ga.get(), gb.get()); },
                                          [&](int i) { fused_on(rt, i, nullptr, nullptr); }, s, blocker);
  const PairTimes unfused_parts = time_pair(act_kernel, [&](int) { bias_gemm(); }, s, blocker);
  return {{"problem", p.key()},
          {"runtime", rt.explain_backward(p)},
          {"unfused_grad_a", lt_a.candidate().id()},
          {"unfused_grad_b", lt_b.candidate().id()},
          {"unfused_bias_gemm", lt_bias.candidate().id()},
          {"fused_us", t.a_us},
          {"unfused_us", t.b_us},
          {"speedup", t.b_us / t.a_us},
          {"fused_gemms_serial_us", fused_parts.a_us},
          {"fused_pass_only_us", fused_parts.b_us},
          {"unfused_act_kernel_us", unfused_parts.a_us},
          {"unfused_bias_gemm_us", unfused_parts.b_us}};
}

// A cublasLtMatmul with everything prepared once: the least a caller of cuBLASLt can do per call.
struct RawLtCall {
  RawLtCall(cublasLtHandle_t handle, const GemmProblem& p, const GemmOperands& x) : h(handle), operands(x) {
    const LtGemm gemm(handle, p);
    candidate = gemm.heuristic(1, kWorkspace).at(0);
    algo = gemm.make_algo(candidate.lt);
    cublasLtMatmulDesc_t d = nullptr;
    GT_LT_CALL(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F));
    desc = LtMatmulDesc(d);
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_GELU_BIAS;
    GT_LT_CALL(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
    const void* bias = x.bias;
    GT_LT_CALL(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
    // Row-major NN as column-major: Yᵀ (n×m) = Bᵀ (n×k) · Aᵀ (k×m).
    const auto m = static_cast<std::uint64_t>(p.m), n = static_cast<std::uint64_t>(p.n),
               k = static_cast<std::uint64_t>(p.k);
    lb = make_lt_layout(n, k, static_cast<std::int64_t>(n));
    la = make_lt_layout(k, m, static_cast<std::int64_t>(k));
    ly = make_lt_layout(n, m, static_cast<std::int64_t>(n));
    workspace = DeviceBuffer<unsigned char>(kWorkspace);
  }
  void operator()(cudaStream_t s) const {
    const float alpha = 1.f, beta = 0.f;
    GT_LT_CALL(cublasLtMatmul(h, desc.get(), &alpha, operands.B, lb.get(), operands.A, la.get(), &beta, operands.Y,
                              ly.get(), operands.Y, ly.get(), &algo, workspace.get(), workspace.size(), s));
  }
  cublasLtHandle_t h;
  GemmOperands operands;
  Candidate candidate;
  cublasLtMatmulAlgo_t algo{};
  LtMatmulDesc desc;
  LtMatrixLayout la, lb, ly;
  DeviceBuffer<unsigned char> workspace;
};

// Host nanoseconds per call of two calls, each enqueued 256 at a time behind the blocking kernel (the GPU is busy,
// so every call only enqueues). Each round times one batch of each, in alternating order, so a drift in the host's
// speed (its clock, other processes) hits both sides of a round; the overhead is the median of the per-round
// differences, not the difference of two medians taken at different times.
struct HostTimes {
  double a_ns = 0, b_ns = 0, b_minus_a_ns = 0;
};

template <typename CallA, typename CallB>
HostTimes paired_host_ns_per_call(CallA&& call_a, CallB&& call_b, cudaStream_t s, BlockingKernel& blocker) {
  constexpr int kCalls = 256;
  constexpr int kPairedRounds = 63;
  const auto batch_ns = [&](auto&& call) {
    blocker.block(s);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) call();
    const auto t1 = std::chrono::steady_clock::now();
    blocker.release();
    GT_CUDA_CALL(cudaStreamSynchronize(s));
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / kCalls;
  };
  std::vector<double> a, b, diff;
  for (int round = 0; round < kPairedRounds; ++round) {
    const bool a_first = round % 2 == 0;
    const double first = a_first ? batch_ns(call_a) : batch_ns(call_b);
    const double second = a_first ? batch_ns(call_b) : batch_ns(call_a);
    a.push_back(a_first ? first : second);
    b.push_back(a_first ? second : first);
    diff.push_back(b.back() - a.back());
  }
  return {median(a), median(b), median(diff)};
}

json host_overhead(Runtime& rt, const std::string& db, const std::vector<GemmProblem>& prepared, cublasLtHandle_t h,
                   std::size_t l2, cudaStream_t s, BlockingKernel& blocker) {
  GemmProblem p;
  p.m = p.n = p.k = 256;
  p.epi.bias = true;
  p.epi.act = Activation::Gelu;
  const ProblemBuffers buffers(p, l2, fresh_seed(), s);
  const GemmOperands x = buffers.operands(0);
  const RawLtCall raw(h, p, x);
  // A runtime of its own, pinned to the raw call's algo: the same kernel, so only the host paths differ.
  Runtime pinned(db);
  pinned.pin(p, raw.candidate.id());
  pinned.forward(p, x, s);
  const HostTimes host = paired_host_ns_per_call([&] { raw(s); }, [&] { pinned.forward(p, x, s); }, s, blocker);

  // The lookup every call makes, over a runtime holding every problem of this benchmark.
  constexpr int kLookups = 1 << 20;
  int found = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kLookups; ++i) found += rt.prepared(prepared[static_cast<std::size_t>(i) % prepared.size()]);
  const auto t1 = std::chrono::steady_clock::now();
  const double lookup_ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / kLookups;
  if (found != kLookups) throw CheckError("a prepared problem was not found by the lookup");
  return {{"problem", p.key()},
          {"candidate", raw.candidate.id()},
          {"raw_cublaslt_ns_per_call", host.a_ns},
          {"runtime_ns_per_call", host.b_ns},
          {"overhead_ns", host.b_minus_a_ns},
          {"lookup_ns", lookup_ns},
          {"lookup_table_problems", prepared.size()},
          {"target_overhead_ns", 1000},
          {"target_lookup_ns", 200},
          {"met", host.b_minus_a_ns <= 1000 && lookup_ns <= 200}};
}

// The same for one of our kernels: a runtime call pinned to a skinny variant against the variant's own launch, at a
// decode-like shape nobody tuned. Also the host cost of that family's per-problem slice rule (a loop over counts),
// which a launcher works out once per problem rather than at every call.
json own_host_overhead(const std::string& db, std::size_t l2, cudaStream_t s, BlockingKernel& blocker) {
  GemmProblem p;
  p.m = 4;
  p.n = 11008;
  p.k = 1226;
  p.epi.bias = true;
  p.epi.act = Activation::Gelu;
  const std::string variant_name = "skinny_mma_tf32_8x128x32_s4";
  const kernels::KernelVariant* v = kernels::find_kernel_variant(variant_name);
  if (!v) throw CheckError("runtime_bench: no kernel variant " + variant_name);
  if (const std::string why = v->unsupported_reason(p); !why.empty())
    throw CheckError("runtime_bench: " + variant_name + " cannot run " + p.key() + ": " + why);
  const ProblemBuffers buffers(p, l2, fresh_seed(), s);
  const GemmOperands x = buffers.operands(0);
  const kernels::LaunchScratchBuffer scratch(*v, p);
  const int slices = v->slices_for(p);
  Runtime pinned(db);
  pinned.pin(p, "own/" + variant_name);
  pinned.forward(p, x, s);
  v->launch(p, x, slices, scratch.view(), s);
  const HostTimes host = paired_host_ns_per_call([&] { v->launch(p, x, slices, scratch.view(), s); },
                                                 [&] { pinned.forward(p, x, s); }, s, blocker);

  constexpr int kRules = 1 << 18;
  int sum = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kRules; ++i) {
    p.k = 1226 + (i & 7);  // a problem the compiler cannot fold away
    sum += v->slices_for(p);
  }
  const auto t1 = std::chrono::steady_clock::now();
  if (sum <= 0) throw CheckError("runtime_bench: no slice count");
  p.k = 1226;
  return {{"problem", p.key()},
          {"candidate", "own/" + variant_name},
          {"slices", slices},
          {"raw_launch_ns_per_call", host.a_ns},
          {"runtime_ns_per_call", host.b_ns},
          {"overhead_ns", host.b_minus_a_ns},
          {"slice_rule_ns", std::chrono::duration<double, std::nano>(t1 - t0).count() / kRules},
          {"target_overhead_ns", 1000},
          {"met", host.b_minus_a_ns <= 1000}};
}

json summary(const std::vector<json>& cases, double target_min, double target_geomean) {
  std::vector<double> speedups;
  const json* worst = nullptr;
  for (const json& c : cases) {
    speedups.push_back(c["speedup"].get<double>());
    if (!worst || c["speedup"].get<double>() < (*worst)["speedup"].get<double>()) worst = &c;
  }
  const double g = geomean(speedups);
  json out = {{"cases", cases.size()}, {"geomean_speedup", g}, {"target_geomean", target_geomean}};
  if (worst) {
    out["min_speedup"] = (*worst)["speedup"];
    out["min_problem"] = (*worst)["problem"];
  }
  bool met = g >= target_geomean;
  if (target_min > 0) {
    out["target_min"] = target_min;
    met = met && worst && (*worst)["speedup"].get<double>() >= target_min;
  }
  out["met"] = met;
  return out;
}

void run(const Args& a) {
  const SweepProfile profile = load_sweep_profile(a.profile, default_profiles_dir());
  const DeviceInfo device = query_device(0);
  RuntimeOptions options;
  options.fp32_equivalent = a.fp32_equivalent;
  const DeviceBuffer<unsigned char> workspace(options.workspace_bytes);
  options.workspace = workspace.get();
  Runtime rt(a.db, 0, options);
  std::vector<GemmProblem> forward, backward, prepared;
  for (const GemmProblem& p : profile.problems) {
    if (p.pass != Pass::Forward) continue;
    forward.push_back(p);
    if (backward_size(p) && !a.forward_only) backward.push_back(with_z(p));
  }
  for (const GemmProblem& p : forward) rt.prepare(p);
  for (const GemmProblem& p : backward) {
    rt.prepare(p);
    rt.prepare_backward(p);
  }
  for (const GemmProblem& p : forward) prepared.push_back(p);
  for (const GemmProblem& p : backward)
    for (const GemmProblem& q : {p, backward_problem(p, Pass::GradA), backward_problem(p, Pass::GradB)})
      prepared.push_back(q);
  if (a.prepare_only) {
    rt.flush();
    std::printf("resolved %zu problems; their misses are recorded in %s\n", prepared.size(), a.db.c_str());
    return;
  }

  RuntimeOptions serial_options = options;
  serial_options.concurrent_backward = false;
  Runtime serial(a.db, 0, serial_options);  // the same choices, the backward's two GEMMs one after the other
  const CudaStream stream;
  const cudaStream_t s = stream.get();
  const LtHandle lt = make_lt_handle();
  BlockingKernel blocker;
  std::vector<json> fwd_cases, bwd_cases;
  for (const GemmProblem& p : forward) {
    fwd_cases.push_back(
        forward_case(rt, p, lt.get(), {workspace.get(), workspace.size()}, device.l2_bytes, s, blocker));
    const json& c = fwd_cases.back();
    std::printf("forward  %-44s runtime %9.2f us  heuristic %9.2f us  x%.3f  %s\n", p.key().c_str(),
                c["runtime_us"].get<double>(), c["heuristic_us"].get<double>(), c["speedup"].get<double>(),
                c["runtime_candidate"].get<std::string>().c_str());
  }
  for (const GemmProblem& p : backward) {
    bwd_cases.push_back(
        backward_case(rt, serial, p, lt.get(), device.l2_bytes, device.identity.sm_count, s, blocker));
    const json& c = bwd_cases.back();
    std::printf("backward %-44s fused   %9.2f us  unfused   %9.2f us  x%.3f  (fused serial %.2f, pass %.2f; "
                "act' %.2f, bias gemm %.2f)\n",
                p.key().c_str(), c["fused_us"].get<double>(), c["unfused_us"].get<double>(),
                c["speedup"].get<double>(), c["fused_gemms_serial_us"].get<double>(),
                c["fused_pass_only_us"].get<double>(), c["unfused_act_kernel_us"].get<double>(),
                c["unfused_bias_gemm_us"].get<double>());
  }
  const json overhead = host_overhead(rt, a.db, prepared, lt.get(), device.l2_bytes, s, blocker);
  const json own_overhead = own_host_overhead(a.db, device.l2_bytes, s, blocker);

  json out;
  out["device"] = device.identity;
  out["db"] = a.db;
  out["profile"] = profile.name;
  out["fp32_equivalent"] = a.fp32_equivalent;
  out["method"] = "median of " + std::to_string(kRounds) + " rounds; per round one batch of " +
                  std::to_string(kBatchCalls) +
                  " back-to-back calls per side behind a blocking kernel, order alternating, inputs rotating over > 2x "
                  "L2; CUDA events per batch; the forward's heuristic-first in the runtime's lent cuBLASLt workspace";
  out["forward"] = fwd_cases;
  out["forward_summary"] = summary(fwd_cases, 0.98, 1.05);
  out["backward"] = bwd_cases;
  out["backward_summary"] = summary(bwd_cases, 0, 1.2);
  out["host_overhead"] = overhead;
  out["own_host_overhead"] = own_overhead;
  const json& fs = out["forward_summary"];
  const json& bs = out["backward_summary"];
  std::printf("forward vs cuBLASLt heuristic-first: geomean x%.3f (target 1.05), min x%.3f at %s (target 0.98): %s\n",
              fs["geomean_speedup"].get<double>(), fs["min_speedup"].get<double>(),
              fs["min_problem"].get<std::string>().c_str(), fs["met"].get<bool>() ? "met" : "MISSED");
  if (!bwd_cases.empty())
    std::printf("fused backward vs unfused chain (shapes <= %lld): geomean x%.3f (target 1.2): %s\n",
                static_cast<long long>(kBackwardMaxDim), bs["geomean_speedup"].get<double>(),
                bs["met"].get<bool>() ? "met" : "MISSED");
  std::printf("host: raw cublasLtMatmul %.0f ns, runtime call %.0f ns, overhead %.0f ns (target 1000); lookup %.1f ns "
              "(target 200): %s\n",
              overhead["raw_cublaslt_ns_per_call"].get<double>(), overhead["runtime_ns_per_call"].get<double>(),
              overhead["overhead_ns"].get<double>(), overhead["lookup_ns"].get<double>(),
              overhead["met"].get<bool>() ? "met" : "MISSED");
  std::printf("host, own kernel %s at %s: its launch %.0f ns, runtime call %.0f ns, overhead %.0f ns (target 1000): "
              "%s; the slice rule (worked out once per problem) %.0f ns\n",
              own_overhead["candidate"].get<std::string>().c_str(), own_overhead["problem"].get<std::string>().c_str(),
              own_overhead["raw_launch_ns_per_call"].get<double>(), own_overhead["runtime_ns_per_call"].get<double>(),
              own_overhead["overhead_ns"].get<double>(), own_overhead["met"].get<bool>() ? "met" : "MISSED",
              own_overhead["slice_rule_ns"].get<double>());
  if (!a.json_path.empty()) write_json_file(a.json_path, out);
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  gemmtune::Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--db" && has_value)
      a.db = argv[++i];
    else if (arg == "--profile" && has_value)
      a.profile = argv[++i];
    else if (arg == "--json" && has_value)
      a.json_path = argv[++i];
    else if (arg == "--prepare-only")
      a.prepare_only = true;
    else if (arg == "--forward-only")
      a.forward_only = true;
    else if (arg == "--fp32-equivalent")
      a.fp32_equivalent = true;
    else {
      std::fprintf(stderr, "usage: runtime_bench --db FILE [--profile NAME|FILE] [--json OUT] [--prepare-only] "
                           "[--forward-only] [--fp32-equivalent]\n");
      return 2;
    }
  }
  if (a.db.empty()) {
    std::fprintf(stderr, "runtime_bench: --db is required (a db tuned for the profile's problems)\n");
    return 2;
  }
  try {
    gemmtune::run(a);
  } catch (const gemmtune::Error& e) {
    std::fprintf(stderr, "runtime_bench: %s\n", e.what());
    return static_cast<int>(e.code());
  }
  return 0;
}
