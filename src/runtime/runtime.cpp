#include "gemmtune/runtime.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/default_db.hpp"
#include "common/error.hpp"
#include "cuda/device_info.hpp"
#include "cuda/stream.hpp"
#include "kernels/registry.hpp"
#include "launch/candidate_launcher.hpp"
#include "lt/lt_handles.hpp"
#include "lt/no_entry_candidates.hpp"
#include "problem/pass_gemm.hpp"
#include "runtime/cache_index.hpp"
#include "runtime/call_graphs.hpp"
#include "runtime/default_candidate.hpp"
#include "runtime/first_use_trial.hpp"
#include "runtime/grad_epilogue.hpp"
#include "runtime/miss_log.hpp"
#include "runtime/problem_hash.hpp"
#include "runtime/selection.hpp"
#include "runtime/skinny_trial_order.hpp"
#include "runtime/stream_scratch.hpp"
#include "runtime/trial_decision.hpp"
#include "runtime/trial_gpu.hpp"
#include "runtime/variant_ranking.hpp"

namespace gemmtune {

using runtime::Choice;
using runtime::ChoiceSource;

namespace {

// One resolved GEMM: the choice (for explain) and the launcher that runs it in the calling stream's scratch, and
// where the choice has one, the launcher of what a call inside a graph capture runs.
struct GemmPlan {
  GemmPlan(const GemmProblem& p, Choice c, cublasLtHandle_t lt, std::size_t workspace_bytes)
      : choice(std::move(c)),
        launcher(p, choice.candidate, lt, ScratchAtLaunch{workspace_bytes}),
        graphs(runtime::launches_every_call(pass_gemm(p), choice.candidate)) {
    launcher.set_behind_previous_kernel(true);  // a program's calls, back to back or beside its own kernels
    if (choice.in_graph) {
      in_graph_launcher =
          std::make_unique<CandidateLauncher>(p, *choice.in_graph, lt, ScratchAtLaunch{workspace_bytes});
      in_graph_launcher->set_behind_previous_kernel(true);
    }
  }
  // What a call on a stream runs; `capturing`: the stream is being captured into the caller's graph.
  const CandidateLauncher& launcher_for(bool capturing) const {
    return capturing && in_graph_launcher ? *in_graph_launcher : launcher;
  }
  Choice choice;
  CandidateLauncher launcher;
  std::unique_ptr<CandidateLauncher> in_graph_launcher;
  mutable runtime::CallGraphs graphs;  // a cache of its launches: what a call runs does not change with it
};

// Backward GEMMs up to this size (m·n·k = 512³) run side by side. Measured on an H100: at 256³ and 512³ each GEMM
// leaves most SMs idle and the pair takes 20-25% less time side by side; from 1024³ up each one fills the GPU, and
// two at once contend (fp32 1024³: 14% slower than one after the other).
constexpr double kSideBySideMaxWork = 512.0 * 512.0 * 512.0;

// One resolved backward: the elementwise pass and the two GEMMs; its gZ and bias-gradient scratch are the calling
// stream's. gA and gB are independent, so small ones run side by side: gB on the stream scratch's side stream (with
// that stream's own workspace) beside gA.
struct BackwardPlan {
  BackwardPlan(const GemmProblem& p, int sm_count, const GemmPlan& a, const GemmPlan& b, bool gemms_side_by_side)
      : pass(p, sm_count), grad_a(a), grad_b(b), side_by_side(gemms_side_by_side) {}
  runtime::GradEpilogue pass;
  const GemmPlan& grad_a;
  const GemmPlan& grad_b;
  bool side_by_side;
};

// The scratch a launch of `plan` on this stream (or its side stream) uses: the same memory at every call, made at
// the first. Asked for before anything of a call is enqueued, so a call over the scratch budget enqueues nothing.
struct PlanScratch {
  BorrowedWorkspace workspace;
  unsigned* tickets = nullptr;
  float* padding = nullptr;
};

PlanScratch scratch_of(const CandidateLauncher& l, runtime::StreamScratch& scratch, bool side) {
  PlanScratch out;
  out.workspace = side ? scratch.side_workspace(&l, l.workspace_needed()) : scratch.workspace(&l, l.workspace_needed());
  out.tickets = scratch.tickets(&l, runtime::ScratchUse::SplitKTickets, l.ticket_count());
  out.padding = scratch.floats(&l, runtime::ScratchUse::Padding, l.padding_floats());
  return out;
}

// A launch on s in the scratch scratch_of gave it.
void launch_in(const CandidateLauncher& l, const GemmOperands& x, cudaStream_t s, const PlanScratch& p) {
  l.launch(x, s, p.workspace, p.tickets, p.padding);
}

void require(bool ok, const GemmProblem& p, const char* what) {
  if (!ok) throw InputError(std::string(what) + " (problem " + p.key() + ")");
}

}  // namespace

class Runtime::Impl {
 public:
  Impl(const std::string& db_path, int device, const RuntimeOptions& options)
      : options_(options), db_path_(db_path), device_(query_device(device)),
        device_key_(device_.identity.key()),
        cache_(runtime::load_cache(db_path, device_key_)),
        lt_(make_lt_handle()),
        scratch_(options.workspace_bytes, options.workspace, options.max_stream_scratch, options.max_capture_scratch,
                 options.max_scratch_bytes) {
    if (options.workspace) require_device_memory(options.workspace, device);
    if (options.max_trial_candidates < 1)
      throw InputError("RuntimeOptions::max_trial_candidates must be at least 1, not " +
                       std::to_string(options.max_trial_candidates));
    if (const std::string w = cache_.index.foreign_warning(); !w.empty()) warn(w);
    if (!cache_.db_found)
      rules_.cache_note = "the db '" + db_path + "' was not found";
    else if (cache_.index.size() == 0)
      rules_.cache_note = "the db '" + db_path + "' has no entry for this device" +
                          (cache_.index.foreign_count() > 0
                               ? " (" + std::to_string(cache_.index.foreign_count()) + " of other devices ignored)"
                               : std::string());
    rules_.max_nearest_distance = options.max_nearest_distance;
    rules_.min_transfer_margin = options.min_transfer_margin;
    rules_.min_agreeing_neighbours = options.min_agreeing_neighbours;
    rules_.confirm_on_first_use = options.confirm_standins;
    rules_.max_trial_candidates = options.max_trial_candidates;
    rules_.fp32_equivalent = options.fp32_equivalent;
  }

  // Every entry point holds this while it runs: one host thread at a time resolves, launches (a cuBLASLt plan's
  // descriptor takes each call's pointers) or writes misses. A call's enqueue is microseconds; its GPU work is not
  // held back, since other streams' calls have scratch of their own.
  std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(mutex_); }

  // The hot path: a hash lookup, then the launch in the stream's scratch (a hash lookup by stream id). Resolution
  // (allocation, SQLite-free algo build) only on a problem's first call; a stream's scratch at its first call.
  void gemm(const GemmProblem& p, const GemmOperands& x, cudaStream_t s) {
    const auto held = lock();
    const GemmPlan& gp = plan(p, s, &x);
    runtime::StreamScratch& scratch = scratch_.of(s);
    const CandidateLauncher& l = gp.launcher_for(scratch.capture());
    const PlanScratch ps = scratch_of(l, scratch, false);
    if (options_.replay_repeated_calls && !scratch.capture())
      gp.graphs.run(runtime::ExactCall{x, s, &scratch}, capture_stream(),
                    [&](cudaStream_t on) { launch_in(l, x, on, ps); });
    else
      launch_in(l, x, s, ps);
  }

  bool replays(const GemmProblem& p, const GemmOperands& x, cudaStream_t s) {
    if (!options_.replay_repeated_calls) return false;
    const auto held = lock();
    const auto it = plans_.find(p);
    if (it == plans_.end()) return false;
    runtime::StreamScratch& scratch = scratch_.of(s);
    return !scratch.capture() && it->second->graphs.repeats(runtime::ExactCall{x, s, &scratch});
  }

  CallGraphUse call_graphs() {
    const auto held = lock();
    CallGraphUse use;
    for (const auto& [problem, plan] : plans_) {
      use.graphs += plan->graphs.graphs();
      use.replays += plan->graphs.replays();
      use.launches_ahead += plan->graphs.launches_ahead();
    }
    return use;
  }

  void backward(const GemmProblem& p, const BackwardOperands& x, cudaStream_t s) {
    const auto held = lock();
    const BackwardPlan& bp = backward_plan(p, s);
    require(x.gY != nullptr, p, "backward needs gY");
    require(p.epi.act == Activation::None || x.Z, p, "the backward of an activation needs the forward's Z (save_z)");
    require(!x.gBias || p.epi.bias, p, "gBias was given but the problem has no bias");
    require(!x.gA || x.B, p, "gA needs B");
    require(!x.gB || x.A, p, "gB needs A");
    runtime::StreamScratch& scratch = scratch_.of(s);
    float* gz = bp.pass.writes_gz() ? scratch.floats(&bp, runtime::ScratchUse::Gz,
                                                     static_cast<std::size_t>(p.m) * static_cast<std::size_t>(p.n))
                                    : nullptr;
    float* partials = x.gBias ? scratch.floats(&bp, runtime::ScratchUse::BiasPartials, bp.pass.partial_floats())
                              : nullptr;
    unsigned* tickets = x.gBias ? scratch.tickets(&bp, runtime::ScratchUse::BiasTickets, bp.pass.ticket_count())
                                : nullptr;
    // All of the call's scratch before its first launch.
    const bool side_by_side = x.gA && x.gB && bp.side_by_side;
    const CandidateLauncher& grad_a_launcher = bp.grad_a.launcher_for(scratch.capture());
    const CandidateLauncher& grad_b_launcher = bp.grad_b.launcher_for(scratch.capture());
    const PlanScratch scratch_a = x.gA ? scratch_of(grad_a_launcher, scratch, false) : PlanScratch{};
    const PlanScratch scratch_b = x.gB ? scratch_of(grad_b_launcher, scratch, side_by_side) : PlanScratch{};
    bp.pass.launch(x.gY, x.Z, gz, x.gBias, x.seed, x.offset, x.offset_ptr, partials, tickets, s);
    const float* gz_read = gz ? gz : x.gY;
    const GemmOperands grad_a = pass_gemm_operands(Pass::GradA, x.A, x.B, gz_read, x.gA);
    const GemmOperands grad_b = pass_gemm_operands(Pass::GradB, x.A, x.B, gz_read, x.gB);
    if (side_by_side) {
      const cudaStream_t side = scratch.side_stream();
      scratch.fork_join().fork(s, side);
      launch_in(grad_b_launcher, grad_b, side, scratch_b);
      launch_in(grad_a_launcher, grad_a, s, scratch_a);
      scratch.fork_join().join(s, side);
      return;
    }
    if (x.gA) launch_in(grad_a_launcher, grad_a, s, scratch_a);
    if (x.gB) launch_in(grad_b_launcher, grad_b, s, scratch_b);
  }

  bool prepared(const GemmProblem& p) {
    const auto held = lock();
    return plans_.find(p) != plans_.end();
  }

  // Whether p runs its exact entry's own candidate: a first-use trial may have put another of the no-entry set, or an
  // own variant the sweep timed faster there, in its place (decide_by_trial).
  bool runs_exact_entry(const GemmProblem& p) {
    const auto held = lock();
    const Choice& c = plan(p, std::nullopt).choice;
    const CacheEntry* e = cache_.index.exact(p);
    return c.source == ChoiceSource::Exact && e != nullptr && e->candidate.id() == c.candidate.id();
  }

  std::optional<double> exact_entry_saving_us(const GemmProblem& p) {
    const auto held = lock();
    const CacheEntry* e = cache_.index.exact(p);
    if (e == nullptr || !e->evidence.known()) return std::nullopt;
    return e->stats.median_us * (e->evidence.min_margin() - 1);
  }

  const Choice& choice(const GemmProblem& p) {
    const auto held = lock();
    return plan(p, std::nullopt).choice;
  }

  const BackwardPlan& prepare_backward(const GemmProblem& p) {
    const auto held = lock();
    return backward_plan(p, std::nullopt);
  }

  void pin(const GemmProblem& p, const std::string& candidate_id, const std::string& in_graph_id) {
    const auto held = lock();
    p.validate();
    if (plans_.count(p)) throw InputError("cannot pin " + p.key() + ": it was already resolved");
    const auto runnable = [&](const std::string& id) {
      const Candidate c = Candidate::parse_id(id);
      if (const std::string why = unsupported(p, c); !why.empty())
        throw InputError("candidate " + c.id() + " cannot run " + p.key() + ": " + why);
      return c;
    };
    Choice choice;
    choice.candidate = runnable(candidate_id);
    choice.source = ChoiceSource::Pinned;
    choice.why = "pinned by the caller";
    if (!in_graph_id.empty()) {
      choice.in_graph = runnable(in_graph_id);
      choice.why += "; inside a CUDA graph capture " + choice.in_graph->id() + " runs instead, pinned by the caller";
    }
    add_plan(p, std::move(choice));
  }

  void flush() {
    const auto held = lock();
    misses_.flush(db_path_, device_key_);
  }

  StreamScratchUse stream_scratch() {
    const auto held = lock();
    return StreamScratchUse{scratch_.streams(), scratch_.captures(), scratch_.device_bytes()};
  }

  void warn(const std::string& line) const {
    std::ostream& out = options_.warnings ? *options_.warnings : std::cerr;
    out << "gemmtune runtime: warning: " << line << "\n";
  }

  const std::string& device_key() const { return device_key_; }
  std::size_t cache_size() const { return cache_.index.size(); }

 private:
  // The plan of p, resolved at its first call; the caller holds mutex_. `x`: the call's operands on s, whose inputs a
  // first-use trial may time (runtime/trial_gpu.hpp: CallerInputs).
  const GemmPlan& plan(const GemmProblem& p, std::optional<cudaStream_t> s, const GemmOperands* x = nullptr) {
    const auto it = plans_.find(p);
    if (it != plans_.end()) return *it->second;
    return resolve(p, s, x && s ? runtime::caller_inputs(*x, p.epi.bias, *s) : std::nullopt);
  }

  const BackwardPlan& backward_plan(const GemmProblem& p, std::optional<cudaStream_t> s) {
    const auto it = backward_plans_.find(p);
    if (it != backward_plans_.end()) return *it->second;
    require(p.pass == Pass::Forward, p, "backward takes the forward problem");
    p.validate();
    refuse_during_capture(p, s);
    const GemmPlan& a = plan(backward_problem(p, Pass::GradA), s);
    const GemmPlan& b = plan(backward_problem(p, Pass::GradB), s);
    const bool side_by_side = options_.concurrent_backward && p.flops() / 2 <= kSideBySideMaxWork;
    auto bp = std::make_unique<BackwardPlan>(p, device_.identity.sm_count, a, b, side_by_side);
    return *backward_plans_.emplace(p, std::move(bp)).first->second;
  }

  // A host or other-device pointer lent as the workspace would fault inside cuBLASLt; refuse it here instead.
  static void require_device_memory(void* p, int device) {
    cudaPointerAttributes a{};
    GT_CUDA_CALL(cudaPointerGetAttributes(&a, p));
    if (a.type != cudaMemoryTypeDevice || a.device != device)
      throw InputError("RuntimeOptions::workspace must be device memory of GPU " + std::to_string(device));
  }

  // Resolving allocates and builds descriptors: not capturable, so a first call inside a capture is refused
  // instead of breaking the capture halfway.
  static void refuse_during_capture(const GemmProblem& p, std::optional<cudaStream_t> s) {
    if (!s) return;
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    GT_CUDA_CALL(cudaStreamIsCapturing(*s, &status));
    if (status != cudaStreamCaptureStatusNone)
      throw InputError("the first call of " + p.key() +
                       " is inside a CUDA graph capture; call it once (or Runtime::prepare) before capturing");
  }

  std::string unsupported(const GemmProblem& p, const Candidate& c) const {
    try {
      return CandidateLauncher::unsupported_reason(p, c, lt_.get(), options_.workspace_bytes);
    } catch (const Error& e) {  // e.g. cublasLtMatmulAlgoInit refusing an algo id this cuBLASLt does not have
      return e.what();
    }
  }

  const GemmPlan& resolve(const GemmProblem& p, std::optional<cudaStream_t> s,
                          const std::optional<runtime::CallerInputs>& inputs) {
    const auto began = std::chrono::steady_clock::now();
    p.validate();
    refuse_during_capture(p, s);
    if (options_.confirm_standins && !cache_.index.exact(p)) read_measurements();
    std::optional<runtime::DefaultCandidate> d;  // cuBLASLt's heuristic is asked once per problem
    const auto default_of = [&](const GemmProblem& q) {
      if (!(q == p)) return default_for(q);
      if (!d) d = default_for(p);
      return *d;
    };
    Choice choice = runtime::select_candidate(
        cache_.index, p, rules_, [this](const GemmProblem& q, const Candidate& c) { return unsupported(q, c); },
        default_of, &alignment_twin, &skinny_specialists);
    if (options_.confirm_standins) decide_by_trial(p, choice, default_of, began, inputs);
    if (choice.is_miss()) misses_.record(p.key());
    return add_plan(p, choice);
  }

  // What the sweeps measured of every own variant, which ranks a first-use trial's challengers; read at the first
  // untuned problem. A db that can no longer be read costs the ranking, not the program: the trial then tries the
  // tuned shapes' choices alone.
  void read_measurements() {
    try {
      runtime::read_measurements(cache_);
    } catch (const Error& e) {
      warn(std::string("cannot read the own variants' measurements from '") + cache_.db_path +
           "', so first-use trials try only the nearby tuned shapes' choices: " + e.what());
    }
  }

  // A tuned shape's own variant as it runs p: its staged twin where p's operands need staging, else the unstaged one.
  static Candidate alignment_twin(const GemmProblem& p, const Candidate& c) {
    if (c.backend != Backend::Own) return c;
    const kernels::KernelVariant* v = kernels::find_kernel_variant(c.own_variant);
    if (!v) return c;  // unsupported() says why it cannot run
    Candidate twin = c;
    twin.own_variant = kernels::alignment_twin(*v, pass_gemm(p)).name;
    return twin;
  }

  // The decode-sized variants that run p, what a trial times where the db measured none of them, in the order
  // runtime/skinny_trial_order.hpp gives.
  static runtime::Specialists skinny_specialists(const GemmProblem& p) {
    runtime::Specialists s{{}, "the skinny variants, made for decode-sized m", {}};
    const GemmProblem g = pass_gemm(p);
    std::vector<runtime::SkinnyVariant> runs;
    int widest_bm = 0;
    for (const kernels::KernelVariant& v : kernels::kernel_registry())
      if (kernels::is_skinny(v.family) && v.unsupported_reason(g).empty()) {
        runs.push_back({v.name, v.family, v.tile.bm});
        widest_bm = std::max(widest_bm, v.tile.bm);
      }
    s.ranked_by = [m = g.m, widest_bm](const GemmProblem& q) {
      return runtime::skinny_rows_alike(pass_gemm(q).m, m, widest_bm);
    };
    for (std::string& name : runtime::skinny_trial_order(runs, g.m)) {
      Candidate c;
      c.backend = Backend::Own;
      c.own_variant = std::move(name);
      s.candidates.push_back(std::move(c));
    }
    return s;
  }

  runtime::DefaultCandidate default_for(const GemmProblem& p) const {
    return runtime::default_candidate(p, lt_.get(), options_.workspace_bytes, device_.identity.sm_count);
  }

  // The first-use trial (runtime/first_use_trial.hpp) of `tried` against heuristic-first on this problem, on the
  // trial's scratch (trial_gpu.hpp: a stream, a workspace and operands of its own, kept across problems, since the
  // shared workspace may be in use by work already queued on the caller's stream), its warm set the call's `inputs`
  // where given. A challenger that cannot be launched is left out; a trial that fails leaves every challenger untried.
  // Returns the trial's GPU time and the host time from `began` to the trial's first step (zeros where it failed).
  struct TrialCost {
    double gpu_us = 0, setup_us = 0;
  };
  TrialCost trial(const GemmProblem& p, const Candidate& heuristic_first, std::vector<runtime::TrialChallenger>& tried,
                  const std::optional<runtime::CallerInputs>& inputs, std::chrono::steady_clock::time_point began) {
    try {
      if (!trial_scratch_)
        trial_scratch_ = std::make_unique<runtime::TrialScratch>(device_.l2_bytes, options_.workspace_bytes);
      const BorrowedWorkspace ws = trial_scratch_->workspace();
      std::vector<std::unique_ptr<CandidateLauncher>> launchers;
      std::vector<const CandidateLauncher*> sides;
      std::vector<runtime::TrialChallenger*> side_of;  // sides 1.. as tried
      std::vector<runtime::ChallengerRule> rules;  // theirs, one each
      launchers.push_back(std::make_unique<CandidateLauncher>(p, heuristic_first, lt_.get(), ws));
      launchers.back()->set_behind_previous_kernel(true);  // as the plan would launch each side
      sides.push_back(launchers.back().get());
      for (runtime::TrialChallenger& t : tried) {
        try {
          launchers.push_back(std::make_unique<CandidateLauncher>(p, t.candidate, lt_.get(), ws));
          launchers.back()->set_behind_previous_kernel(true);
        } catch (const Error& e) {
          t.text = std::string("first-use trial failed (") + e.what() + ")";
          continue;
        }
        sides.push_back(launchers.back().get());
        side_of.push_back(&t);
        rules.push_back(runtime::challenger_rule(heuristic_first, t.candidate, t.no_entry));
        rules.back().full = t.eager;
      }
      runtime::CudaTrialGpu gpu(*trial_scratch_, sides, inputs);
      const double setup_us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - began).count();
      const runtime::FirstUseTrial result = runtime::run_first_use_trial(gpu, rules);
      trial_scratch_->trim();
      if (result.discarded_batches > 0)
        warn("a first-use trial of " + p.key() + " found its blocking kernel timed out " +
             std::to_string(result.discarded_batches) +
             " time(s) (something queued behind it waited for the GPU); those batches were discarded and timed again");
      for (std::size_t i = 0; i < side_of.size(); ++i) {
        const runtime::ChallengerTrial& c = result.challengers[i];
        side_of[i]->times = c.times;
        side_of[i]->out_of_budget = c.out_of_budget;
        side_of[i]->text = "first-use trial on this problem: " +
                           (c.stopped.empty() ? std::string() : "stopped early, " + c.stopped + ": ") +
                           runtime::trial_times_text(c.times);
      }
      return {result.gpu_us, setup_us};
    } catch (const Error& e) {
      if (trial_scratch_) trial_scratch_->trim();
      for (runtime::TrialChallenger& t : tried) {
        t.times.reset();
        t.text = std::string("first-use trial failed (") + e.what() + ")";
      }
      return {};
    }
  }

  // Every challenger of an untuned problem against heuristic-first: the stand-in and its alternatives (selection.hpp)
  // and the no-entry set's challengers of a fused default (lt/no_entry_candidates.hpp: its plain GEMM followed by our
  // epilogue kernel). The fastest one that beats heuristic-first's fastest batches over all of the problem's
  // challengers (first_use_trial.hpp: fastest_default) runs; none: the default. explain() says what it cost.
  //
  // An exact entry that is itself one of the no-entry set (heuristic-first, or one of the challengers above) is tried
  // the same way: the sweep kept it over what the runtime tries without an entry, among near-ties that where the
  // operands lie decides (results/nvidia-h200/address_speed_probe.txt), and the sweep's operands are not the
  // program's. Held-out seed 9644 (H200): the entry a21+epi of 53x13824x4096 bias+gelu tf32, 1.032-1.048x
  // heuristic-first in the sweep, ran 0.976-0.985x a runtime with no db, whose trial timed it no faster than
  // heuristic-first on its own inputs and ran the `+bias` form of heuristic-first's algo. The trial on the program's
  // inputs decides between the same candidates, and the own variants the sweep timed faster than heuristic-first at
  // this shape (entry_rivals), as a runtime without the entry would try own variants there (selection.hpp: the skinny
  // ones at a decode shape, the ranked ones elsewhere). Another algo stands. An own entry stands where the sweep timed
  // no other own variant near it; else the trial puts it beside those near-ties (variant_ranking.hpp: which trade
  // warm against cold, so noise picks between them), and one of them replaces it only by beating heuristic-first
  // and the entry there.
  template <class DefaultOf>
  void decide_by_trial(const GemmProblem& p, Choice& choice, DefaultOf&& default_of,
                       std::chrono::steady_clock::time_point began,
                       const std::optional<runtime::CallerInputs>& inputs) {
    const bool exact = choice.source == ChoiceSource::Exact;
    if (!exact && choice.source != ChoiceSource::Nearest && choice.source != ChoiceSource::Default) return;  // pinned
    // An own entry is never one of the no-entry set: it is tried only against the near-ties the sweep timed beside it.
    const bool own_entry = exact && choice.candidate.backend == Backend::Own;
    std::vector<runtime::RankedVariant> rivals;
    if (own_entry) {
      rivals = entry_rivals(p, &choice.candidate);
      if (rivals.empty()) return;
    }
    const runtime::DefaultCandidate d = default_of(p);
    if (!d.heuristic_first) return;  // nothing measured to confirm against: the default would be a guess
    if (choice.source == ChoiceSource::Default && choice.candidate.id() != d.candidate.id()) return;
    const GemmProblem g = pass_gemm(p);
    // An own entry beat every one of these beyond noise in the sweep's finalist stage, on the program's conditions,
    // or (the sweep's fallback, problem/candidate_choice.hpp) none of them at least as fast as heuristic-first
    // everywhere beat it beyond noise in any condition.
    const HeuristicFirstOf first_of = lt_heuristic_first_of(g, lt_.get());
    const std::vector<Candidate> no_entry =
        own_entry ? std::vector<Candidate>{} : no_entry_challengers(g, d.candidate, first_of, options_.workspace_bytes);
    // What runs is held to eager's own call (first_use_trial.hpp: kEagerCallLimit), one of the no-entry set or
    // heuristic-first itself; beside an own entry it is timed for that alone.
    const std::optional<Candidate> eager =
        d.candidate.backend == Backend::Lt ? eager_call(g, first_of, options_.workspace_bytes) : std::nullopt;
    const auto is_entry = [&](const Candidate& c) { return c.id() == choice.candidate.id(); };
    if (exact && !own_entry && !is_entry(d.candidate) && std::none_of(no_entry.begin(), no_entry.end(), is_entry))
      return;
    if (exact && !own_entry) rivals = entry_rivals(p, nullptr);
    runtime::TrialSetting setting{exact, own_entry, choice.source == ChoiceSource::Nearest, d, eager, {}};
    std::vector<runtime::TrialChallenger> tried = runtime::trial_challengers(choice, setting, no_entry, rivals);
    if (tried.empty()) return;
    const TrialCost trial_cost = trial(p, d.candidate, tried, inputs, began);
    char cost[200];
    std::snprintf(cost, sizeof(cost),
                  "; this first use took %.1f ms (%zu challenger%s, %.1f ms of GPU time timed, the trial's first step "
                  "at %.1f ms)",
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count(),
                  tried.size(), tried.size() == 1 ? "" : "s", trial_cost.gpu_us / 1000, trial_cost.setup_us / 1000);
    setting.cost = cost;
    runtime::decide_after_trial(tried, setting, choice);
  }

  // The own variants a trial of p's exact entry times beside it (variant_ranking.hpp: exact_shape_rivals; those near
  // `own_entry` where the entry is one), read from the db for p alone. None where the cache came without measurements
  // or the db can no longer be read (a warning then says why): an entry of the no-entry set is then tried against
  // that set only, and an own entry stands.
  std::vector<runtime::RankedVariant> entry_rivals(const GemmProblem& p, const Candidate* own_entry) {
    if (!cache_.db) return {};
    std::vector<OwnVariantSpeed> at_shape;
    try {
      at_shape = cache_.db->own_variant_speeds(cache_.index.device_key(), p.key());
    } catch (const Error& e) {
      warn("cannot read what the sweep measured at " + p.key() + " from '" + cache_.db_path +
           "', so the first-use trial of its entry leaves out our kernels: " + e.what());
      return {};
    }
    std::vector<OwnVariantSpeed> runnable;
    for (OwnVariantSpeed& v : at_shape)
      if (unsupported(p, v.candidate).empty()) runnable.push_back(std::move(v));
    return runtime::exact_shape_rivals(runnable, std::min(runtime::kMaxEntryRivals, options_.max_trial_candidates),
                                       own_entry);
  }

  cudaStream_t capture_stream() {
    if (!capture_stream_) capture_stream_.emplace();
    return capture_stream_->get();
  }

  const GemmPlan& add_plan(const GemmProblem& p, Choice choice) {
    auto plan = std::make_unique<GemmPlan>(p, std::move(choice), lt_.get(), options_.workspace_bytes);
    return *plans_.emplace(p, std::move(plan)).first->second;
  }

  RuntimeOptions options_;
  std::string db_path_;
  DeviceInfo device_;
  std::string device_key_;
  runtime::LoadedCache cache_;
  runtime::SelectionRules rules_;
  LtHandle lt_;
  runtime::StreamScratchPool scratch_;  // each stream's and capture's workspace and tickets
  std::mutex mutex_;
  std::unique_ptr<runtime::TrialScratch> trial_scratch_;  // the first-use trials'; made at the first one
  std::optional<CudaStream> capture_stream_;  // where repeated calls are captured (CallGraphs); made at the first
  std::unordered_map<GemmProblem, std::unique_ptr<GemmPlan>, runtime::ProblemHash> plans_;
  std::unordered_map<GemmProblem, std::unique_ptr<BackwardPlan>, runtime::ProblemHash> backward_plans_;
  runtime::MissLog misses_;
};

std::string default_db_path() { return default_db().path; }

Runtime::Runtime(const std::string& db_path, int device, const RuntimeOptions& options)
    : impl_(std::make_unique<Impl>(db_path, device, options)) {}

Runtime::Runtime(int device, const RuntimeOptions& options) : Runtime(default_db_path(), device, options) {}

Runtime::~Runtime() {
  if (!impl_) return;  // moved from
  try {
    impl_->flush();
  } catch (const std::exception& e) {
    try {
      impl_->warn(std::string("could not record the cache misses: ") + e.what());
    } catch (...) {  // a destructor must not throw, even when the warning stream does
    }
  }
}

Runtime::Runtime(Runtime&&) noexcept = default;
Runtime& Runtime::operator=(Runtime&&) noexcept = default;

void Runtime::forward(const GemmProblem& problem, const GemmOperands& x, cudaStream_t s) {
  require(problem.pass == Pass::Forward, problem, "forward takes a forward problem");
  require(x.A && x.B && x.Y, problem, "forward needs A, B and Y");
  require(!problem.epi.bias || x.bias, problem, "the problem has a bias: pass its pointer");
  require(!problem.epi.save_z || x.Z, problem, "the problem saves Z: pass its pointer");
  impl_->gemm(problem, x, s);
}

void Runtime::forward(const GemmProblem& problem, const float* A, const float* B, const float* bias, float* Y,
                      float* Z, cudaStream_t s, std::uint64_t seed, std::uint64_t offset) {
  GemmOperands x;
  x.A = A;
  x.B = B;
  x.bias = bias;
  x.Y = Y;
  x.Z = Z;
  x.seed = seed;
  x.offset = offset;
  forward(problem, x, s);
}

void Runtime::backward(const GemmProblem& problem, const BackwardOperands& x, cudaStream_t s) {
  impl_->backward(problem, x, s);
}

void Runtime::backward(const GemmProblem& problem, const float* A, const float* B, const float* Z, const float* gY,
                       float* gA, float* gB, float* gBias, cudaStream_t s, std::uint64_t seed,
                       std::uint64_t offset) {
  BackwardOperands x;
  x.A = A;
  x.B = B;
  x.Z = Z;
  x.gY = gY;
  x.gA = gA;
  x.gB = gB;
  x.gBias = gBias;
  x.seed = seed;
  x.offset = offset;
  backward(problem, x, s);
}

void Runtime::gemm(const GemmProblem& problem, const GemmOperands& x, cudaStream_t s) { impl_->gemm(problem, x, s); }

void Runtime::prepare(const GemmProblem& problem) { impl_->choice(problem); }

void Runtime::prepare_backward(const GemmProblem& forward) { impl_->prepare_backward(forward); }

bool Runtime::prepared(const GemmProblem& problem) const { return impl_->prepared(problem); }

void Runtime::pin(const GemmProblem& problem, const std::string& candidate_id, const std::string& in_graph_id) {
  impl_->pin(problem, candidate_id, in_graph_id);
}

std::string Runtime::explain(const GemmProblem& problem) {
  const Choice& c = impl_->choice(problem);
  return problem.key() + ": " + c.candidate.id() + " [" + runtime::to_string(c.source) + "] " + c.why;
}

std::string Runtime::explain_backward(const GemmProblem& forward) {
  const BackwardPlan& bp = impl_->prepare_backward(forward);
  std::string pass = "gZ = gY";
  if (forward.epi.act != Activation::None) pass += " * " + std::string(to_string(forward.epi.act)) + "'(Z)";
  if (forward.epi.dropout()) pass += " * dropout mask/(1-p)";
  if (forward.epi.bias) pass += ", gBias = sum over rows of gZ";
  pass += bp.pass.writes_gz() || forward.epi.bias ? " (one fused pass)" : " (no pass: gZ is gY)";
  if (bp.side_by_side) pass += "; then gA and gB side by side";
  return forward.key() + " backward: " + pass + "\n  " + explain(backward_problem(forward, Pass::GradA)) + "\n  " +
         explain(backward_problem(forward, Pass::GradB));
}

std::string Runtime::candidate_id(const GemmProblem& problem, bool in_graph) {
  const Choice& c = impl_->choice(problem);
  return (in_graph && c.in_graph ? *c.in_graph : c.candidate).id();
}

bool Runtime::runs_exact_entry(const GemmProblem& problem) { return impl_->runs_exact_entry(problem); }

std::optional<double> Runtime::exact_entry_saving_us(const GemmProblem& problem) {
  if (!runs_exact_entry(problem)) return std::nullopt;
  return impl_->exact_entry_saving_us(problem);
}

void Runtime::flush() { impl_->flush(); }

const std::string& Runtime::device_key() const { return impl_->device_key(); }

std::size_t Runtime::cache_size() const { return impl_->cache_size(); }

StreamScratchUse Runtime::stream_scratch() const { return impl_->stream_scratch(); }

CallGraphUse Runtime::call_graphs() const { return impl_->call_graphs(); }

bool Runtime::replays(const GemmProblem& problem, const GemmOperands& x, cudaStream_t s) {
  return impl_->replays(problem, x, s);
}

}  // namespace gemmtune
