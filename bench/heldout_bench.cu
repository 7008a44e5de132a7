// heldout_bench: the runtime on shapes that no profile names, timed as a program pays it (scripts/bench_heldout.sh
// generates the shapes, tunes half of them, and runs this once per seed).
//
// Per shape × mode × epilogue, two sides on the same inputs:
//   runtime    gemmtune::Runtime with the seed's tuned db: an exact entry for the tuned half, the fallback (a nearby
//              tuned shape's choice where the evidence allows, else cuBLASLt's heuristic default) for the other half;
//   heuristic  raw cuBLASLt written here, as a user would: its own descriptors, the heuristic's first algo, and its
//              fused epilogue (GELU_BIAS for bias+gelu), none of gemmtune's launch code involved; in the same 64 MiB
//              workspace the runtime is lent (RuntimeOptions::workspace), because where a workspace lies moves some
//              cuBLASLt algos by up to 6% on the H200, and that is no part of either side's choice;
//   no entry   (with --confirm, tuned shapes only) a second gemmtune::Runtime with no db at all, in the same
//              workspace: what the program would run had the sweep kept no entry (cuBLASLt's default, or its plain GEMM
//              + our epilogue kernel where its first-use trial picks that); a tuned entry must be at least as fast
//              (issue 37: a kept fused GELU_BIAS ran 0.96x of it at 2723x3333x1536 fp32);
// in four conditions:
//   stream/warm   20 back-to-back calls launched into a stream, every call on the same buffers;
//   stream/cold   the same, with L2 overwritten before the batch and the calls rotating over inputs past 2× L2;
//   graph/warm    CUDA graphs of those 20 calls, three per side captured once and replayed in turn round by round;
//   graph/cold    the same with rotating inputs and L2 overwritten before each replay.
// Each batch is queued behind a blocking kernel (host launch latency stays out), which holds the GPU idle for at least
// --idle-ms before it (default 10, as scripts/compare_torch.py's spin: its sides are set beside these times), and is
// timed with CUDA events around the batch, divided by its calls; the two sides alternate which goes first; median
// over the rounds. Rounds go on past --rounds (up to --max-rounds) while the 95% interval of the median ratio is wider
// than ±1%: some clustered cuBLASLt algos run each batch at one of several speeds (144x3072x13824 tf32 cold: 95 to
// 129 us per call), and short split-k calls vary by ±2% from round to round (167x160x5584 tf32 from a graph: two
// graphs of the very same cuBLASLt calls gave medians of 41 rounds from 0.990 to 1.008 of each other), which ±1.5%
// left at the 0.98 bar.
//
//   heldout_bench --db FILE --shapes FILE [--json OUT] [--rounds N] [--max-rounds N] [--calls N] [--confirm]
//                 [--max-trial-candidates N] [--fp32-equivalent] [--no-replays] [--epilogues none,bias+gelu]
//                 [--modes tf32,fp32] [--idle-ms N]
// --idle-ms: the least time the blocking kernel holds the GPU before each batch. Back to back, big batches held the
// H200 at its 700 W cap: 5082x308x5900 fp32 ran 462-532 us a call here at 1515-1980 MHz (median 694 W), and 454-457
// us in compare_torch's process, whose 10 ms spin before each batch kept 1980 MHz, so a ratio between the two
// processes measured the duty cycle (results/nvidia-h200/duty_cycle_clocks.txt). 0: the batches back to back.
// --confirm: the runtime confirms each stand-in on first use (RuntimeOptions::confirm_standins, its default);
// without it the option is off and the evidence rules alone decide. Either way a runtime resolves each problem at a
// first call on the warm set's buffers, as a program's first call does (so its trial times those operands), before
// anything is timed.
// --max-trial-candidates: with --confirm, RuntimeOptions::max_trial_candidates (1-64), so one build can compare
// trials of different lengths on the same dbs.
// --fp32-equivalent: the runtime may run the db's policy-admitted 3xtf32 entries for fp32 problems
// (RuntimeOptions::fp32_equivalent); heuristic-first stays cuBLASLt fp32.
// --no-replays: both runtimes launch every call (RuntimeOptions::replay_repeated_calls off), to hold the replays of
// repeated calls against launches on the same db.
// --epilogues, --modes: the epilogues and math modes timed, comma-separated (default none,bias+gelu and tf32,fp32);
// the torch.compile comparison (scripts/bench_compile.sh) times bias+gelu only, each mode on a GPU of its own.
// The shapes file: {"seed": S, "shapes": [{"m": M, "n": N, "k": K, "tuned": true|false}, ...]}.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/list_option.hpp"
#include "common/json_fields.hpp"
#include "cuda/device_info.hpp"
#include "cuda/graph.hpp"
#include "cuda/stream.hpp"
#include "gemmtune/runtime.hpp"
#include "launch/blocking_kernel.hpp"
#include "launch/problem_buffers.hpp"
#include "lt/lt_gemm.hpp"

namespace gemmtune {
namespace {

using nlohmann::json;

constexpr std::size_t kWorkspace = std::size_t{64} << 20;  // the runtime's default, and the profiles'

struct Args {
  std::string db;
  std::string shapes;
  std::string json_path;
  int rounds = 11;
  int max_rounds = 101;
  int calls = 20;
  bool confirm = false;           // RuntimeOptions::confirm_standins
  int max_trial_candidates = RuntimeOptions{}.max_trial_candidates;
  bool fp32_equivalent = false;   // RuntimeOptions::fp32_equivalent
  bool replays = true;            // RuntimeOptions::replay_repeated_calls
  std::vector<std::string> epilogues{"none", "bias+gelu"};
  std::vector<MathMode> modes{MathMode::Tf32, MathMode::Fp32};
  int idle_ms = 10;
};

struct HeldoutShape {
  std::int64_t m = 0, n = 0, k = 0;
  bool tuned = false;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

template <typename T>
void set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const T& value) {
  GT_LT_CALL(cublasLtMatmulDescSetAttribute(d, attr, &value, sizeof(value)));
}

// cuBLASLt as a user calls it for Y = act(A·B + bias), row-major NN: Yᵀ (n×m) = Bᵀ·Aᵀ in column-major terms, the
// heuristic's first algo, its own fused epilogue. Nothing of gemmtune's launch path (LtGemm, CandidateLauncher).
class RawHeuristicFirst {
 public:
  RawHeuristicFirst(cublasLtHandle_t h, const GemmProblem& p, const DeviceBuffer<unsigned char>& workspace)
      : h_(h), bias_(p.epi.bias), workspace_(workspace) {
    if (p.trans_a || p.trans_b || p.out != OutputLayout::RowMajor)
      throw InputError("heldout_bench: only row-major NN problems");
    cublasLtMatmulDesc_t d = nullptr;
    const cublasComputeType_t compute = p.mode == MathMode::Tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    GT_LT_CALL(cublasLtMatmulDescCreate(&d, compute, CUDA_R_32F));
    desc_ = LtMatmulDesc(d);
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
    if (p.epi.act == Activation::Gelu && p.epi.bias)
      epi = CUBLASLT_EPILOGUE_GELU_BIAS;
    else if (p.epi.act != Activation::None || p.epi.bias || p.epi.save_z || p.epi.dropout())
      throw InputError("heldout_bench: epilogues none and bias+gelu only");
    set_desc(d, CUBLASLT_MATMUL_DESC_EPILOGUE, epi);
    const auto m = static_cast<std::uint64_t>(p.m), n = static_cast<std::uint64_t>(p.n),
               k = static_cast<std::uint64_t>(p.k);
    lb_ = make_lt_layout(n, k, static_cast<std::int64_t>(n));
    la_ = make_lt_layout(k, m, static_cast<std::int64_t>(k));
    ly_ = make_lt_layout(n, m, static_cast<std::int64_t>(n));
    cublasLtMatmulPreference_t pref = nullptr;
    GT_LT_CALL(cublasLtMatmulPreferenceCreate(&pref));
    const LtPreference owned(pref);
    const std::uint64_t ws = workspace_.size();
    GT_LT_CALL(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
    cublasLtMatmulHeuristicResult_t result{};
    int returned = 0;
    GT_LT_CALL(cublasLtMatmulAlgoGetHeuristic(h, d, lb_.get(), la_.get(), ly_.get(), ly_.get(), pref, 1, &result,
                                              &returned));
    if (returned < 1 || result.state != CUBLAS_STATUS_SUCCESS)
      throw CheckError("cuBLASLt's heuristic has no algo for " + p.key());
    algo_ = result.algo;
    Candidate c;
    c.lt = LtGemm::read_algo_fields(algo_);
    c.heuristic_rank = 0;
    id_ = c.id();
  }

  void operator()(const GemmOperands& x, cudaStream_t s) const {
    // As a user with rotating inputs must: the bias pointer lives in the descriptor.
    if (bias_) set_desc(desc_.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(x.bias));
    const float alpha = 1.f, beta = 0.f;
    GT_LT_CALL(cublasLtMatmul(h_, desc_.get(), &alpha, x.B, lb_.get(), x.A, la_.get(), &beta, x.Y, ly_.get(), x.Y,
                              ly_.get(), &algo_, workspace_.get(), workspace_.size(), s));
  }
  const std::string& id() const { return id_; }

 private:
  cublasLtHandle_t h_;
  bool bias_;
  LtMatmulDesc desc_;
  LtMatrixLayout la_, lb_, ly_;
  cublasLtMatmulAlgo_t algo_{};
  const DeviceBuffer<unsigned char>& workspace_;
  std::string id_;
};

struct Condition {
  bool graph;
  bool cold;
  const char* launch() const { return graph ? "graph" : "stream"; }
  const char* l2() const { return cold ? "cold" : "warm"; }
};
constexpr Condition kConditions[] = {{false, false}, {false, true}, {true, false}, {true, true}};

// Graphs of the very same launches run at speeds of their own, each steadily for its life: PyTorch's graphs of 20 calls
// differed by up to 0.9% on 4-12 us calls, 3.0% on a split-k one (results/nvidia-h200/graph_instance_probe.txt). One
// graph per side drew one such offset per side; the median over rounds that replay several in turn lies nearer their
// centre. scripts/compare_torch.py times its sides alike.
constexpr int kGraphInstances = 3;

struct Bench {
  cudaStream_t s;
  BlockingKernel& blocker;
  DeviceBuffer<unsigned char>& flush;
  int rounds;
  int max_rounds;
  int calls;
  std::chrono::milliseconds idle;  // the least time the blocking kernel holds the GPU before a batch
};

struct SideBySide {
  double a_us, b_us;  // each side's median per-call time over the rounds
  // Median over the rounds of b / a within a round. Under the power cap the SM clock moves for tens of ms at a time
  // (results/nvidia-h200/address_speed_probe.txt), so the same call timed on both sides came out 0.95x or 1.2x as
  // ratios of the sides' medians (144x3072x13824 tf32: 94.8 and 112.9 us in one run); a round's two batches share
  // that clock.
  double b_over_a;
  double ratio_low, ratio_high;  // the 95% interval of b_over_a (order statistics of the rounds' ratios)
  int rounds;
};

// The distribution-free 95% interval of the median of sorted x: the order statistics n/2 ± 0.98·√n.
std::pair<double, double> median_interval(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size()), half = 0.98 * std::sqrt(n);
  const auto at = [&](double rank) {
    return x[static_cast<std::size_t>(std::clamp(rank, 0.0, n - 1))];
  };
  return {at(std::floor(n / 2 - half)), at(std::ceil(n / 2 + half) - 1)};
}

// What a runtime's calls did since `before`: replays of held graphs, and launches where a graph was held
// (CallGraphUse): where two sides run one candidate, whether they run it the same way.
json graph_use_since(const Runtime& rt, const CallGraphUse& before) {
  const CallGraphUse now = rt.call_graphs();
  return {{"replays", now.replays - before.replays}, {"launches_ahead", now.launches_ahead - before.launches_ahead}};
}

// A runtime's first call of p, on the warm set, waited for.
void first_call(Runtime& rt, const GemmProblem& p, const ProblemBuffers& buffers, cudaStream_t s) {
  rt.forward(p, buffers.operands(0), s);
  GT_CUDA_CALL(cudaStreamSynchronize(s));
}

// Two sides in one condition. call_a(x), call_b(x) enqueue one call on operands x.
template <typename CallA, typename CallB>
SideBySide time_condition(const Condition& c, const ProblemBuffers& buffers, CallA&& call_a,
                                         CallB&& call_b, Bench& b) {
  const auto enqueue = [&](auto&& call) {
    for (int i = 0; i < b.calls; ++i) call(buffers.operands(c.cold ? i : 0));
  };
  std::vector<CudaGraphExec> graphs_a, graphs_b;
  if (c.graph)
    for (int i = 0; i < kGraphInstances; ++i) {
      graphs_a.push_back(CudaGraphExec::capture(b.s, [&] { enqueue(call_a); }));
      graphs_b.push_back(CudaGraphExec::capture(b.s, [&] { enqueue(call_b); }));
    }
  // One batch of a side in round r: its graph r % kGraphInstances replayed, or its calls launched.
  const auto run_side = [&](bool side_a, int r) {
    if (c.graph)
      (side_a ? graphs_a : graphs_b)[static_cast<std::size_t>(r % kGraphInstances)].launch(b.s);
    else if (side_a)
      enqueue(call_a);
    else
      enqueue(call_b);
  };
  const CudaEvent start, stop;
  int flushes = 0;
  const auto batch_us = [&](bool side_a, int r) {
    const auto blocked_at = std::chrono::steady_clock::now();
    b.blocker.block(b.s);
    if (c.cold) GT_CUDA_CALL(cudaMemsetAsync(b.flush.get(), ++flushes & 0xff, b.flush.size(), b.s));
    start.record(b.s);
    run_side(side_a, r);
    stop.record(b.s);
    std::this_thread::sleep_until(blocked_at + b.idle);
    b.blocker.release();
    GT_CUDA_CALL(cudaStreamSynchronize(b.s));
    if (b.blocker.timed_out())
      throw CheckError("the blocking kernel timed out: work queued behind it waited for the GPU");
    return 1e3 * static_cast<double>(stop.elapsed_ms_since(start)) / b.calls;
  };
  // Warm-up, before anything waits behind the blocking kernel (launch/blocking_kernel.hpp): the first replay uploads a
  // graph, the first calls load the kernels, and either may wait for the GPU. Once per graph and at least twice per
  // side, the stream drained between: a runtime captures a call it has seen before where its stream has drained
  // (runtime/call_graphs.hpp), so each side's calls reach the state a program's repeated calls run in, whatever this
  // process timed before. Once, the side timed earlier (in the pairing against heuristic-first) replayed its first
  // call's graph here and the other launched: the same cuBLASLt GEMV then ran 2-4% slower on the side that replayed
  // (heldout seed 9623, H200).
  if (c.cold) GT_CUDA_CALL(cudaMemsetAsync(b.flush.get(), 0, b.flush.size(), b.s));
  for (int pass = 0; pass < std::max(2, kGraphInstances); ++pass)
    for (const bool side_a : {true, false}) {
      run_side(side_a, pass);
      GT_CUDA_CALL(cudaStreamSynchronize(b.s));
    }
  std::vector<double> ta, tb, ratio;
  std::pair<double, double> interval{0, 0};
  for (int r = 0; r < b.max_rounds; ++r) {
    const bool a_first = r % 2 == 0;
    const double first = batch_us(a_first, r);
    const double second = batch_us(!a_first, r);
    ta.push_back(a_first ? first : second);
    tb.push_back(a_first ? second : first);
    ratio.push_back(tb.back() / ta.back());
    if (r + 1 < b.rounds) continue;
    interval = median_interval(ratio);
    const double mid = median(ratio);
    if (interval.first >= mid / 1.01 && interval.second <= mid * 1.01) break;
  }
  return {median(ta), median(tb), median(ratio), interval.first, interval.second, static_cast<int>(ratio.size())};
}

std::vector<HeldoutShape> read_shapes(const std::string& path, std::int64_t* seed) {
  const json doc = read_json_file(path);
  const JsonFields top(doc, path);
  *seed = top.integer("seed");
  std::vector<HeldoutShape> out;
  for (const JsonFields& f : top.objects("shapes")) {
    HeldoutShape s;
    s.m = f.integer("m");
    s.n = f.integer("n");
    s.k = f.integer("k");
    s.tuned = f.boolean("tuned");
    if (s.m < 1 || s.n < 1 || s.k < 1) f.fail("m", "dimensions must be >= 1");
    out.push_back(s);
  }
  if (out.empty()) top.fail("shapes", "is empty");
  return out;
}

std::string source_of(const std::string& explanation) {
  for (const char* s : {"exact", "nearest", "default", "pinned"})
    if (explanation.find(std::string("[") + s + "]") != std::string::npos) return s;
  return "?";
}

void run(const Args& a) {
  std::int64_t seed = 0;
  const std::vector<HeldoutShape> shapes = read_shapes(a.shapes, &seed);
  const DeviceInfo device = query_device(0);
  RuntimeOptions options;
  options.confirm_standins = a.confirm;
  options.max_trial_candidates = a.max_trial_candidates;
  options.fp32_equivalent = a.fp32_equivalent;
  options.replay_repeated_calls = a.replays;
  DeviceBuffer<unsigned char> workspace(kWorkspace);
  options.workspace = workspace.get();
  options.workspace_bytes = workspace.size();
  Runtime rt(a.db, 0, options);
  // The no-entry side: the same options with no db (a path in the temp dir that only its misses are written to).
  const std::filesystem::path no_db =
      std::filesystem::temp_directory_path() / ("heldout_bench_no_db_" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(no_db);
  std::optional<Runtime> no_entry;
  if (a.confirm) no_entry.emplace(no_db.string(), 0, options);
  const CudaStream stream;
  const LtHandle lt = make_lt_handle();
  BlockingKernel blocker;
  DeviceBuffer<unsigned char> flush(2 * device.l2_bytes);
  Bench bench{stream.get(), blocker, flush, a.rounds, std::max(a.rounds, a.max_rounds), a.calls,
              std::chrono::milliseconds(a.idle_ms)};
  std::mt19937_64 fresh(std::random_device{}());

  json records = json::array();
  for (const MathMode mode : a.modes)
    for (const std::string& epilogue_text : a.epilogues)
      for (const HeldoutShape& shape : shapes) {
        const char* epilogue = epilogue_text.c_str();
        GemmProblem p;
        p.m = shape.m;
        p.n = shape.n;
        p.k = shape.k;
        p.mode = mode;
        p.epi = Epilogue::parse(epilogue);
        const ProblemBuffers buffers(p, device.l2_bytes, fresh(), stream.get());
        const RawHeuristicFirst raw(lt.get(), p, workspace);
        // Resolved at a first call, as a program resolves it: its first-use trial then times the warm set on the
        // buffers timed below, where prepare() would time scratch operands of the trial's own, placed elsewhere (a
        // trial on scratch kept lt/a21-t18 at 4x14336x11008 tf32 at 1.04x heuristic-first, which these buffers
        // then ran at 0.86-0.96x: held-out seed 9647, H200).
        first_call(rt, p, buffers, stream.get());
        const std::string explanation = rt.explain(p);
        const std::string stream_candidate = rt.candidate_id(p);
        const std::string graph_candidate = rt.candidate_id(p, true);
        const std::string shape_key =
            std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
        const bool against_no_entry = no_entry && shape.tuned;
        if (against_no_entry) first_call(*no_entry, p, buffers, stream.get());
        for (const Condition& c : kConditions) {
          const std::string& candidate = c.graph ? graph_candidate : stream_candidate;
          const CallGraphUse rt_before = rt.call_graphs();
          const SideBySide t = time_condition(
              c, buffers, [&](const GemmOperands& x) { rt.forward(p, x, stream.get()); },
              [&](const GemmOperands& x) { raw(x, stream.get()); }, bench);
          const json rt_graph_use = graph_use_since(rt, rt_before);
          json vs_no_entry = nullptr;
          if (against_no_entry) {
            const CallGraphUse pair_before[] = {rt.call_graphs(), no_entry->call_graphs()};
            const SideBySide e = time_condition(
                c, buffers, [&](const GemmOperands& x) { rt.forward(p, x, stream.get()); },
                [&](const GemmOperands& x) { no_entry->forward(p, x, stream.get()); }, bench);
            vs_no_entry = {{"no_entry_us", e.b_us},
                           {"runtime_us", e.a_us},
                           {"speedup", e.b_over_a},
                           {"speedup_interval", {e.ratio_low, e.ratio_high}},
                           {"rounds", e.rounds},
                           {"runtime_graph_use", graph_use_since(rt, pair_before[0])},
                           {"no_entry_graph_use", graph_use_since(*no_entry, pair_before[1])},
                           {"no_entry_candidate", no_entry->candidate_id(p, c.graph)},
                           {"no_entry_explain", no_entry->explain(p)}};
          }
          records.push_back({{"shape", shape_key},
                             {"mode", to_string(mode)},
                             {"epilogue", epilogue},
                             {"launch", c.launch()},
                             {"condition", c.l2()},
                             {"selection", shape.tuned ? "exact" : "fallback"},
                             {"runtime_source", source_of(explanation)},
                             {"runtime_us", t.a_us},
                             {"heuristic_us", t.b_us},
                             {"speedup", t.b_over_a},
                             {"speedup_interval", {t.ratio_low, t.ratio_high}},
                             {"rounds", t.rounds},
                             {"runtime_graph_use", rt_graph_use},
                             {"torch_us", nullptr},
                             {"candidate", candidate},
                             {"heuristic_candidate", raw.id()},
                             {"same_algo", candidate == raw.id()},
                             {"seed", seed},
                             {"confirm_standins", a.confirm},
                             {"max_trial_candidates", a.max_trial_candidates},
                             {"fp32_equivalent", a.fp32_equivalent},
                             {"explain", explanation},
                             {"vs_no_entry", vs_no_entry}});
          std::printf("%-5s %-9s %-18s %-6s %-4s %-8s runtime %9.2f us  heuristic %9.2f us  x%.3f  %s%s\n",
                      to_string(mode), epilogue, shape_key.c_str(), c.launch(), c.l2(),
                      shape.tuned ? "exact" : "fallback", t.a_us, t.b_us, t.b_over_a, candidate.c_str(),
                      vs_no_entry.is_null()
                          ? ""
                          : ("  vs no entry x" + std::to_string(vs_no_entry["speedup"].get<double>())).c_str());
          std::fflush(stdout);
        }
      }

  json out;
  out["device"] = device.identity;
  out["gpu_slug"] = device.identity.slug();
  out["db"] = a.db;
  out["seed"] = seed;
  out["confirm_standins"] = a.confirm;
  out["max_trial_candidates"] = a.max_trial_candidates;
  out["fp32_equivalent"] = a.fp32_equivalent;
  out["method"] = "per condition, median of " + std::to_string(a.rounds) + " rounds (up to " +
                  std::to_string(std::max(a.rounds, a.max_rounds)) +
                  " while the 95% interval of the median ratio is wider than +-1%) of one batch of " +
                  std::to_string(a.calls) +
                  " back-to-back calls per side behind a blocking kernel that holds the GPU idle for at least " +
                  std::to_string(a.idle_ms) + " ms, order alternating; CUDA events around the "
                  "batch / calls; speedup: median over the rounds of heuristic / runtime within a round; stream: "
                  "launched into the stream, graph: three captured graphs of the batch per side replayed in turn; "
                  "warm: the same buffers every call; cold: L2 overwritten before the batch and the calls rotating "
                  "over inputs past 2x L2; both sides in one 64 MiB cuBLASLt workspace (RuntimeOptions::workspace); "
                  "vs_no_entry (with --confirm, tuned shapes): the same pairing of the runtime against a runtime "
                  "with no db, speedup = no entry / runtime; *_graph_use: that side's calls in the condition, warm-up "
                  "included, that replayed a held graph or launched where one was held (Runtime::call_graphs)";
  out["records"] = records;
  if (!a.json_path.empty()) write_json_file(a.json_path, out);
  no_entry.reset();  // writes its misses, then the file goes
  std::filesystem::remove(no_db);
}

// text as a whole decimal integer in lo..hi (no trailing unit, not empty), or nothing.
std::optional<int> int_in(const char* text, long lo, long hi) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < lo || v > hi) return std::nullopt;
  return static_cast<int>(v);
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  gemmtune::Args a;
  bool trial_candidates_given = false;
  const char* usage =
      "usage: heldout_bench --db FILE --shapes FILE [--json OUT] [--rounds N] [--max-rounds N] [--calls N] "
      "[--confirm] [--max-trial-candidates N] [--fp32-equivalent] [--no-replays] [--epilogues none,bias+gelu] "
      "[--modes tf32,fp32] [--idle-ms N]\n";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--db" && has_value) {
      a.db = argv[++i];
    } else if (arg == "--shapes" && has_value) {
      a.shapes = argv[++i];
    } else if (arg == "--json" && has_value) {
      a.json_path = argv[++i];
    } else if (arg == "--confirm") {
      a.confirm = true;
    } else if (arg == "--fp32-equivalent") {
      a.fp32_equivalent = true;
    } else if (arg == "--no-replays") {
      a.replays = false;
    } else if (arg == "--epilogues" && has_value) {
      a.epilogues = gemmtune::cli::split_list(argv[++i]);
      if (a.epilogues.empty()) {
        std::fprintf(stderr, "heldout_bench: --epilogues names no epilogue\n%s", usage);
        return 2;
      }
      for (const std::string& text : a.epilogues) {
        try {
          gemmtune::Epilogue::parse(text);
        } catch (const gemmtune::Error& e) {
          std::fprintf(stderr, "heldout_bench: --epilogues: %s\n%s", e.what(), usage);
          return 2;
        }
      }
    } else if (arg == "--modes" && has_value) {
      a.modes.clear();
      for (const std::string& text : gemmtune::cli::split_list(argv[++i])) {
        std::optional<gemmtune::MathMode> mode;
        try {
          mode = gemmtune::parse_math_mode(text);
        } catch (const gemmtune::Error&) {
        }
        if (mode != gemmtune::MathMode::Tf32 && mode != gemmtune::MathMode::Fp32) {
          std::fprintf(stderr, "heldout_bench: --modes: '%s' is not tf32 or fp32\n%s", text.c_str(), usage);
          return 2;
        }
        a.modes.push_back(*mode);
      }
      if (a.modes.empty()) {
        std::fprintf(stderr, "heldout_bench: --modes names no mode\n%s", usage);
        return 2;
      }
    } else if ((arg == "--rounds" || arg == "--max-rounds" || arg == "--calls") && has_value) {
      const std::optional<int> v = gemmtune::int_in(argv[++i], 1, 1000);
      if (!v) {
        std::fprintf(stderr, "heldout_bench: %s must be 1..1000\n%s", arg.c_str(), usage);
        return 2;
      }
      (arg == "--rounds" ? a.rounds : arg == "--calls" ? a.calls : a.max_rounds) = *v;
    } else if (arg == "--idle-ms" && has_value) {
      const std::optional<int> v = gemmtune::int_in(argv[++i], 0, 1000);
      if (!v) {
        std::fprintf(stderr, "heldout_bench: --idle-ms must be 0..1000\n%s", usage);
        return 2;
      }
      a.idle_ms = *v;
    } else if (arg == "--max-trial-candidates" && has_value) {
      const std::optional<int> v = gemmtune::int_in(argv[++i], 1, 64);
      if (!v) {
        std::fprintf(stderr, "heldout_bench: --max-trial-candidates must be 1..64\n%s", usage);
        return 2;
      }
      a.max_trial_candidates = *v;
      trial_candidates_given = true;
    } else {
      std::fprintf(stderr, "%s", usage);
      return 2;
    }
  }
  if (trial_candidates_given && !a.confirm) {
    std::fprintf(stderr, "heldout_bench: --max-trial-candidates needs --confirm (without it nothing is tried)\n%s",
                 usage);
    return 2;
  }
  if (a.db.empty() || a.shapes.empty()) {
    std::fprintf(stderr, "heldout_bench: --db and --shapes are required\n%s", usage);
    return 2;
  }
  try {
    gemmtune::run(a);
  } catch (const gemmtune::Error& e) {
    std::fprintf(stderr, "heldout_bench: %s\n", e.what());
    return static_cast<int>(e.code());
  }
  return 0;
}
