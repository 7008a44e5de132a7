// gemmtune run: one problem through the runtime, as a program would run it: the candidate it chooses (and why),
// a check against the fp64 reference, and its time. This is the command the ncu/nsys lines point at: warm-up calls
// run outside the profiled region; each timed call runs inside the case's NVTX range, and the timed region is
// bracketed by cudaProfilerStart/Stop.
#include <cstdio>
#include <memory>
#include <optional>
#include <random>

#include <cuda_profiler_api.h>

#include "cli/case_options.hpp"
#include "cli/commands.hpp"
#include "cli/db_option.hpp"
#include "common/error.hpp"
#include "cuda/device_info.hpp"
#include "cuda/stream.hpp"
#include "gemmtune/runtime.hpp"
#include "launch/device_footprint.hpp"
#include "launch/problem_buffers.hpp"
#include "launch/random_fill.hpp"
#include "nvtx/case_range.hpp"
#include "nvtx/nvtx_range.hpp"
#include "problem/pass_gemm.hpp"
#include "tuner/verifier.hpp"

namespace gemmtune::cli {
namespace {

struct RunArgs {
  CaseOptions c;
  std::string db;  // empty: the default db
  int device = 0;
  std::string candidate;
  int iters = 20;
  int warmup = 5;
  bool backward = false;
  bool fp32_equivalent = false;
  bool no_replays = false;
};

// Enqueues `calls` calls of `call` between two events and returns the mean time per call in microseconds.
template <typename Call>
double time_calls(int calls, cudaStream_t s, Call&& call) {
  const CudaEvent start, stop;
  start.record(s);
  for (int i = 0; i < calls; ++i) call();
  stop.record(s);
  GT_CUDA_CALL(cudaEventSynchronize(stop.get()));
  return 1000.0 * stop.elapsed_ms_since(start) / calls;
}

void print_time(const char* what, double us, double flops) {
  std::printf("%-9s %.2f us/call (CUDA events around the timed calls / calls), %.1f TFLOP/s\n", what, us,
              flops / (us * 1e6));
}

// The case as asked: one GEMM (a forward problem, or one backward GEMM with --pass), timed through Runtime::gemm.
bool run_gemm(Runtime& rt, const GemmProblem& p, const RunArgs& a, std::uint64_t seed, cudaStream_t s) {
  const GemmProblem g = pass_gemm(p);
  const ProblemBuffers buffers(g, 0, seed, s);  // one input set: the profiled calls read what a program would
  const GemmOperands x = buffers.operands(0);
  const Verifier verifier(g, buffers, s);
  rt.gemm(p, x, s);
  GT_CUDA_CALL(cudaStreamSynchronize(s));
  const Verdict v = verifier.compare(buffers.y(), buffers.z(), s);
  std::printf("verify    relative error %.3g vs the fp64 reference (tolerance %.3g): %s\n", v.error, v.tolerance,
              v.ok ? "ok" : v.message.c_str());

  for (int i = 0; i < a.warmup; ++i) rt.gemm(p, x, s);
  const Candidate c = Candidate::parse_id(rt.candidate_id(p));
  const std::string range = nvtx_case_range(p, c);
  GT_CUDA_CALL(cudaStreamSynchronize(s));
  GT_CUDA_CALL(cudaProfilerStart());
  const double us = time_calls(a.iters, s, [&] {
    const NvtxRange r(range);
    rt.gemm(p, x, s);
  });
  GT_CUDA_CALL(cudaProfilerStop());
  print_time("time", us, g.flops());
  return v.ok;
}

// --backward: the forward once (for Z), then the backward step (gZ/gBias pass + both GEMMs) timed.
bool run_backward(Runtime& rt, const GemmProblem& p, const RunArgs& a, std::uint64_t seed, cudaStream_t s) {
  const ProblemBuffers fwd(p, 0, seed, s);
  const GemmOperands x = fwd.operands(0);
  const Verifier verifier(p, fwd, s);
  rt.forward(p, x, s);
  GT_CUDA_CALL(cudaStreamSynchronize(s));
  const Verdict v = verifier.compare(fwd.y(), fwd.z(), s);
  std::printf("verify    forward: relative error %.3g vs the fp64 reference (tolerance %.3g): %s\n", v.error,
              v.tolerance, v.ok ? "ok" : v.message.c_str());

  const auto mn = static_cast<std::size_t>(p.m * p.n);
  DeviceBuffer<float> gy(mn), ga(static_cast<std::size_t>(p.m * p.k)), gb(static_cast<std::size_t>(p.k * p.n)),
      gbias(p.epi.bias ? static_cast<std::size_t>(p.n) : 0);
  fill_uniform(gy.get(), mn, seed + 7, -1.f, 1.f, s);
  BackwardOperands b;
  b.A = x.A;
  b.B = x.B;
  b.Z = x.Z;
  b.gY = gy.get();
  b.gA = ga.get();
  b.gB = gb.get();
  b.gBias = gbias.get();
  b.seed = x.seed;
  b.offset = x.offset;
  b.offset_ptr = x.offset_ptr;
  std::printf("%s\n", rt.explain_backward(p).c_str());
  for (int i = 0; i < a.warmup; ++i) {
    rt.forward(p, x, s);
    rt.backward(p, b, s);
  }
  const std::string fwd_range = nvtx_case_range(p, Candidate::parse_id(rt.candidate_id(p)));
  const std::string bwd_range = p.key() + " backward";  // three kernels, two candidates: not one case
  GT_CUDA_CALL(cudaStreamSynchronize(s));
  GT_CUDA_CALL(cudaProfilerStart());
  const double fwd_us = time_calls(a.iters, s, [&] {
    const NvtxRange r(fwd_range);
    rt.forward(p, x, s);
  });
  const double bwd_us = time_calls(a.iters, s, [&] {
    const NvtxRange r(bwd_range);
    rt.backward(p, b, s);
  });
  GT_CUDA_CALL(cudaProfilerStop());
  print_time("forward", fwd_us, p.flops());
  print_time("backward", bwd_us, 2 * p.flops());
  return v.ok;
}

void run(const RunArgs& a) {
  const GemmProblem p = a.c.problem();
  if (a.iters < 1 || a.warmup < 0) throw InputError("--iters must be >= 1 and --warmup >= 0");
  if (a.backward) {
    if (p.pass != Pass::Forward) throw InputError("--backward runs the backward of a forward problem: drop --pass");
    if (!a.candidate.empty())
      throw InputError("--candidate names one GEMM; with --backward there are three: pin one with --pass bwd_a|bwd_b");
    if (p.epi.act != Activation::None && !p.epi.save_z)
      throw InputError("--backward with an activation needs --save-z: the backward reads the forward's Z");
  }
  RuntimeOptions options;
  options.fp32_equivalent = a.fp32_equivalent;
  options.replay_repeated_calls = !a.no_replays;
  // One input set (ProblemBuffers with no L2 to exceed); --backward adds the gradients to the forward's buffers.
  const std::uint64_t needed = a.backward ? verify_and_time_bytes(p, 1, 0) + backward_gradient_bytes(p)
                                          : verify_and_time_bytes(pass_gemm(p), 1, 0);
  require_device_memory(needed, "problem " + p.key());
  const std::string db = db_or_default(a.db);
  Runtime rt(db, a.device, options);
  if (!a.candidate.empty()) rt.pin(p, a.candidate);
  const CudaStream stream;
  std::printf("device    %s\n", rt.device_key().c_str());
  std::printf("cache     %zu entries for this device in %s\n", rt.cache_size(), db.c_str());
  std::printf("%s\n", rt.explain(p).c_str());
  const std::uint64_t seed = (std::uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  const bool ok = a.backward ? run_backward(rt, p, a, seed, stream.get()) : run_gemm(rt, p, a, seed, stream.get());
  if (!ok) throw CheckError("the result does not match the fp64 reference");
}

}  // namespace

void register_run(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Run one problem through the runtime: its chosen candidate, a check, its time");
  add_case_options(*cmd, a->c);
  cmd->add_option("--db", a->db,
                  std::string("Tuning db whose algo cache the runtime reads (missing: heuristic defaults)") +
                      kDefaultDbHelp);
  cmd->add_option("--device", a->device, "CUDA device index")->capture_default_str();
  cmd->add_option("--candidate", a->candidate, "Run this candidate (own/<variant> or lt/a...) instead of choosing");
  cmd->add_option("--iters", a->iters, "Timed calls")->capture_default_str();
  cmd->add_option("--warmup", a->warmup, "Untimed calls before them")->capture_default_str();
  cmd->add_flag("--backward", a->backward, "Also run and time the backward step (needs --save-z with an activation)");
  cmd->add_flag("--fp32-equivalent", a->fp32_equivalent,
                "Let fp32 problems use the 3xtf32 cache entries `sweep --fp32-equivalent` admitted "
                "(RuntimeOptions::fp32_equivalent)");
  cmd->add_flag("--no-replays", a->no_replays,
                "Launch every call: no replay of a repeated call's CUDA graph (RuntimeOptions::replay_repeated_calls)");
  cmd->callback([a] { run(*a); });
}

}  // namespace gemmtune::cli
