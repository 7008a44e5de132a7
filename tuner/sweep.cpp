#include "tuner/sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <random>
#include <set>

#include "cuda/device_info.hpp"
#include "cuda/stream.hpp"
#include "db/tuning_db.hpp"
#include "launch/candidate_launcher.hpp"
#include "launch/device_footprint.hpp"
#include "lt/lt_gemm.hpp"
#include "lt/no_entry_candidates.hpp"
#include "profiler/gpu_peaks.hpp"
#include "problem/candidate_choice.hpp"
#include "problem/fp32_equivalent.hpp"
#include "problem/pass_gemm.hpp"
#include "tuner/candidate_pruning.hpp"
#include "tuner/measurement_loop.hpp"
#include "tuner/program_timing.hpp"
#include "tuner/verifier.hpp"

namespace gemmtune {
namespace {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string clock_text(double seconds) {
  char buf[32];
  const auto s = static_cast<long>(seconds);
  std::snprintf(buf, sizeof(buf), "%02ld:%02ld", s / 60, s % 60);
  return buf;
}

// The candidates of one problem: ours that fit it, then what cuBLASLt's searches answer (with its bias alone where the
// problem has more, on padded copies too where a stored matrix's rows are not 16-byte aligned), and the no-entry set's
// challengers whatever the profile asks (the finalist stage must time what the runtime would run without an entry),
// without duplicates.
std::vector<Candidate> enumerate_candidates(const PlannedProblem& pp, const LtSearchSettings& lt, cublasLtHandle_t h,
                                            const std::optional<NoEntryCandidates>& no_entry) {
  std::vector<Candidate> out;
  for (const std::string& name : pp.own_variants) {
    Candidate c;
    c.backend = Backend::Own;
    c.own_variant = name;
    out.push_back(c);
  }
  if (pp.lt_search.empty()) return out;
  std::set<std::string> seen;
  auto add = [&](const std::vector<Candidate>& cs) {
    for (const Candidate& c : cs)
      if (seen.insert(c.id()).second) out.push_back(c);
  };
  const LtGemm fused(h, pass_gemm(pp.problem), LtEpilogueMode::PreferFused);
  add(fused.heuristic(lt.top_k, lt.workspace_bytes));
  if (lt.by_algo_id) add(fused.search_by_algo_id(lt.per_algo_id, lt.workspace_bytes));
  if (no_entry) add(no_entry->challengers);
  if (lt.unfused_baseline && fused.fused_epilogue()) {
    const LtGemm unfused(h, pass_gemm(pp.problem), LtEpilogueMode::Unfused);
    add(unfused.heuristic(lt.top_k, lt.workspace_bytes));
  }
  // PyTorch eager's addmm + activation: cuBLASLt's bias, then our kernel for the rest.
  if (lt.unfused_baseline && LtGemm::bias_in_gemm_unsupported_reason(pass_gemm(pp.problem)).empty())
    add(LtGemm(h, pass_gemm(pp.problem), LtEpilogueMode::BiasInGemm).heuristic(lt.top_k, lt.workspace_bytes));
  // Rows that are not 16-byte aligned: the heuristic's algos on padded copies too (lt/lt_padding.hpp).
  if (LtGemm::padding_unsupported_reason(pass_gemm(pp.problem)).empty())
    add(LtGemm(h, pass_gemm(pp.problem), LtEpilogueMode::Padded).heuristic(lt.top_k, lt.workspace_bytes));
  return out;
}

// The fp32-equivalent policy's yardstick: cuBLASLt fp32's error (its heuristic's first algo) on the inputs every
// candidate of this problem is verified on; -1 when cuBLASLt cannot run the problem or failed (nothing is admitted).
double lt_fp32_error(const GemmProblem& p, const Verifier& verifier, std::size_t workspace, cublasLtHandle_t h,
                     cudaStream_t s) {
  try {
    const GemmProblem gemm = pass_gemm(p);
    if (!LtGemm::unsupported_reason(gemm).empty()) return -1;
    const std::vector<Candidate> first = LtGemm(h, gemm, LtEpilogueMode::PreferFused).heuristic(1, workspace);
    if (first.empty()) return -1;
    const Verdict v = verifier.check(CandidateLauncher(p, first.front(), h, workspace), s);
    return std::isfinite(v.error) ? v.error : -1;
  } catch (const Error&) {
    return -1;
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The first pass over a candidate: whether it can run the problem, whether its result is right and, with pruning, its
// first batch (tuner/candidate_pruning.hpp). Status Ok means verified (and admitted): the second pass samples or
// prunes it. by_policy: c is a 3xtf32 variant for an fp32 problem, timed (and cacheable) only if the policy admits it
// on the error just verified, against lt_error (cuBLASLt fp32's in the same verification).
MeasurementRecord verify_one(const GemmProblem& p, const Candidate& c, const ProblemBuffers& buffers,
                             const Verifier& verifier, const TimingSettings& timing, std::size_t workspace,
                             cublasLtHandle_t h, MeasureContext& ctx, bool by_policy, double lt_error,
                             TimingStats* first_batch) {
  MeasurementRecord r;
  r.problem = p;
  r.candidate = c;
  try {
    const std::string why = CandidateLauncher::unsupported_reason(p, c, h, workspace);
    if (!why.empty()) {
      r.status = MeasureStatus::Unsupported;
      r.message = why;
      return r;
    }
    const CandidateLauncher launcher(p, c, h, workspace);
    const Verdict v = verifier.check(launcher, ctx.stream);
    r.verify_error = v.error;
    r.tolerance = v.tolerance;
    if (!v.ok) {
      r.status = MeasureStatus::VerifyFailed;
      r.message = v.message;
      return r;
    }
    if (by_policy) {
      const Fp32EquivalentVerdict admission = admit_fp32_equivalent(true, v.error, v.tolerance, lt_error);
      if (!admission.admitted) {
        r.status = MeasureStatus::Unsupported;  // skipped, not failed: it is right, only not fp32-accurate here
        r.message = admission.reason;
        return r;
      }
      r.fp32_equivalent = true;
    }
    if (timing.prune) *first_batch = time_first_batch(launcher, buffers, timing, ctx);
    r.status = MeasureStatus::Ok;
  } catch (const Error& e) {
    r.status = MeasureStatus::Error;
    r.message = e.what();
  }
  return r;
}

ProblemMetrics measure_metrics(const GemmProblem& p, const MeasurementRecord& best, const ProblemBuffers& buffers,
                              std::size_t workspace, cublasLtHandle_t h, cudaStream_t s,
                              CuptiRangeProfiler& profiler, const std::string& gpu_name) {
  ProblemMetrics m;
  m.candidate_id = best.candidate.id();
  const CandidateLauncher launcher(p, best.candidate, h, workspace);
  m.counters = profiler.measure([&] { launcher.launch(buffers.operands(0), s); });
  m.min_dram_bytes = min_dram_bytes(p);
  if (const auto peaks = nominal_peaks(gpu_name))
    m.roofline = classify_roofline(p.flops(), m.counters.dram_bytes(), best.stats.median_us * 1e-6,
                                   peaks->tflops(p.mode), peaks->dram_tbytes_per_s);
  return m;
}

// Finalists slower than this (relative, by kernel time) than the fastest are not re-timed: launch gaps and the L2
// state move a call's cost by a few percent, not by this much.
constexpr double kFinalistWithin = 0.10;

// The verified record of candidate `id`, or null.
const MeasurementRecord* ok_record(const std::vector<MeasurementRecord>& records, const std::string& id) {
  for (const MeasurementRecord& r : records)
    if (r.status == MeasureStatus::Ok && r.candidate.id() == id) return &r;
  return nullptr;
}

// The finalist stage (problem/candidate_choice.hpp): the no-entry set (heuristic-first and the runtime's first-use
// challengers of it) and the fastest few others re-timed as a program pays, all in one shared workspace as the
// runtime's plans are; sets pr.kept_record and pr.evidence by choose_over_no_entry. Without a heuristic-first (3xtf32)
// the ranking's choice stands.
void decide_as_program_pays(ProblemResult& pr, const std::optional<NoEntryCandidates>& no_entry,
                            const ProblemBuffers& buffers, const SweepProfile& profile, cublasLtHandle_t h,
                            BorrowedWorkspace workspace, const L2Flush* flush, MeasureContext& ctx) {
  std::vector<const MeasurementRecord*> fin = finalists(pr.records, profile.timing.finalists, kFinalistWithin);
  if (fin.empty()) return;
  if (profile.timing.prune) {
    const std::size_t near = fin.size();
    fin = finalists_within_reach(fin);
    pr.cost.out_of_reach = static_cast<int>(near - fin.size());
  }
  const auto index_of = [&](const MeasurementRecord* r) { return static_cast<int>(r - pr.records.data()); };
  std::vector<const MeasurementRecord*> members = {fin[0]}, others;
  if (no_entry)
    for (const Candidate& c : no_entry->challengers)
      if (const MeasurementRecord* r = ok_record(pr.records, c.id()); r && r != fin[0]) members.push_back(r);
  for (std::size_t i = 1; i < fin.size(); ++i)
    if (std::find(members.begin(), members.end(), fin[i]) == members.end()) others.push_back(fin[i]);
  // By id: the order in which choose_over_no_entry settles near-ties (first_within_tie_band), as the runtime's trial.
  std::sort(others.begin(), others.end(), [](const MeasurementRecord* a, const MeasurementRecord* b) {
    return a->candidate.id() < b->candidate.id();
  });
  pr.cost.finalists = static_cast<int>(members.size() + others.size()) - 1;
  pr.kept_record = index_of(fin[0]);
  const std::vector<ProgramCondition> conditions = program_conditions(profile.timing);
  if (members.size() == 1 && others.empty()) {  // nothing near enough to challenge it: margin 1 by definition
    for (const ProgramCondition& c : conditions) pr.evidence.conditions.push_back({c.name(), 1.0, kMinProgramNoise});
    return;
  }
  std::vector<std::unique_ptr<CandidateLauncher>> launchers;
  std::vector<const CandidateLauncher*> order;
  for (const std::vector<const MeasurementRecord*>* group : {&members, &others})
    for (const MeasurementRecord* r : *group) {
      launchers.push_back(std::make_unique<CandidateLauncher>(pr.problem, r->candidate, h, workspace));
      // As the runtime launches it: our kernels' setup then overlaps the call before, about 1 us a call in a stream.
      launchers.back()->set_behind_previous_kernel(true);
      order.push_back(launchers.back().get());
    }
  const std::vector<std::vector<ConditionTime>> times =
      time_as_program(order, buffers, profile.timing, fin[0]->stats.median_us, flush, ctx);
  double member_noise = 0;
  for (const MeasurementRecord* m : members) member_noise = std::max(member_noise, placement_noise(m->candidate));
  std::vector<double> min_noise;  // per challenger, against any member
  for (const MeasurementRecord* r : others) min_noise.push_back(std::max(member_noise, placement_noise(r->candidate)));
  for (std::size_t i = 0; i < members.size(); ++i)
    pr.finalists.push_back({members[i]->candidate.id(), i == 0 ? "heuristic_first" : "no_entry",
                            placement_noise(members[i]->candidate), times[i]});
  for (std::size_t i = 0; i < others.size(); ++i)
    pr.finalists.push_back({others[i]->candidate.id(), "challenger", min_noise[i], times[members.size() + i]});
  const auto split = times.begin() + static_cast<std::ptrdiff_t>(members.size());
  const NoEntryChoice choice = choose_over_no_entry(std::vector<std::vector<ConditionTime>>(times.begin(), split),
                                                    std::vector<std::vector<ConditionTime>>(split, times.end()),
                                                    min_noise);
  pr.kept_record = choice.challenger >= 0 ? index_of(others[static_cast<std::size_t>(choice.challenger)])
                                          : index_of(members[static_cast<std::size_t>(choice.member)]);
  pr.evidence = choice.evidence;
}

// The largest problem of the plan must fit beside the L2 flush buffer, before the run is recorded in the db.
void require_sweep_fits(const SweepPlan& plan, const SweepProfile& profile, const DeviceInfo& device) {
  std::uint64_t largest = 0;
  std::string largest_key;
  for (const PlannedProblem& pp : plan.problems) {
    const GemmProblem gemm = pass_gemm(pp.problem);
    const std::uint64_t bytes =
        verify_and_time_bytes(gemm, input_set_count(gemm, device.l2_bytes), profile.lt.workspace_bytes);
    if (bytes > largest) {
      largest = bytes;
      largest_key = pp.problem.key();
    }
  }
  if (largest_key.empty()) return;
  const std::uint64_t flush = profile.timing.l2_flush ? 2 * static_cast<std::uint64_t>(device.l2_bytes) : 0;
  const std::uint64_t finalist_workspace = profile.timing.finalists > 0 ? profile.lt.workspace_bytes : 0;
  require_device_memory(largest + flush + finalist_workspace, "problem " + largest_key + " (the sweep's largest)");
}

}  // namespace

ProblemCost& ProblemCost::operator+=(const ProblemCost& o) {
  wall_s += o.wall_s;
  prepare_s += o.prepare_s;
  verify_s += o.verify_s;
  sample_s += o.sample_s;
  finalist_s += o.finalist_s;
  store_s += o.store_s;
  candidates += o.candidates;
  sampled += o.sampled;
  pruned += o.pruned;
  finalists += o.finalists;
  out_of_reach += o.out_of_reach;
  return *this;
}

const MeasurementRecord* kept_candidate(const ProblemResult& pr) {
  if (pr.kept_record >= 0 && static_cast<std::size_t>(pr.kept_record) < pr.records.size())
    return &pr.records[static_cast<std::size_t>(pr.kept_record)];
  return chosen_candidate(pr.records);
}

SweepResult run_sweep(const SweepPlan& plan, const SweepProfile& profile, const SweepOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const DeviceInfo device = query_device(options.device);
  require_sweep_fits(plan, profile, device);
  SweepResult result;
  result.run.device = device.identity;
  result.run.gemmtune_version = GEMMTUNE_VERSION;
  result.run.profile = profile.name;
  result.run.started_at = utc_now();
  result.run.sm_clock_max_mhz = device.max_sm_clock_mhz;
  const std::string device_key = device.identity.key();

  std::optional<TuningDb> db;
  if (!options.db_path.empty()) {
    db.emplace(options.db_path);
    result.run.id = db->begin_run(result.run);
  }

  const CudaStream stream;
  const LtHandle lt = make_lt_handle();
  BlockingKernel blocker;
  const std::unique_ptr<CallTimer> timer = make_call_timer(options.force_events, &result.timer_warning);
  if (!result.timer_warning.empty()) std::fprintf(stderr, "gemmtune: warning: %s\n", result.timer_warning.c_str());
  MeasureContext ctx{stream.get(), *timer, blocker, {}};
  if (profile.timing.l2_flush) ctx.l2_flush.emplace(device.l2_bytes);
  const bool finalist_stage = profile.timing.finalists > 0 && !program_conditions(profile.timing).empty();
  std::optional<L2Flush> program_flush;
  if (finalist_stage && profile.timing.l2_cold) program_flush.emplace(device.l2_bytes);
  // The finalists' one workspace, as the runtime lends one to all its plans (RuntimeOptions::workspace_bytes): where a
  // workspace lies moves some cuBLASLt algos by up to 6% (placement_noise), so not one per finalist.
  DeviceBuffer<unsigned char> finalist_workspace;
  if (finalist_stage) finalist_workspace = DeviceBuffer<unsigned char>(profile.lt.workspace_bytes);
  std::random_device entropy;  // fresh inputs for every problem, every sweep
  std::unique_ptr<CuptiRangeProfiler> profiler;
  if (options.metrics) {
    try {
      profiler = std::make_unique<CuptiRangeProfiler>(options.device);
    } catch (const Error& e) {
      result.metrics_warning = std::string("--metrics unavailable: ") + e.what();
      std::fprintf(stderr, "gemmtune: warning: %s\n", result.metrics_warning.c_str());
    }
  }

  const auto t0 = std::chrono::steady_clock::now();
  result.setup_s = seconds_since(start);
  const std::size_t total = plan.problems.size();
  for (std::size_t i = 0; i < total; ++i) {
    const PlannedProblem& pp = plan.problems[i];
    ProblemResult pr;
    pr.problem = pp.problem;
    if (options.resume && db && db->problem_done(device_key, pp.problem.key())) {
      pr.resumed = true;
      result.problems.push_back(std::move(pr));
      if (!options.quiet) std::fprintf(stderr, "[%zu/%zu] %s: already measured, skipped (--resume)\n", i + 1, total,
                                       pp.problem.key().c_str());
      continue;
    }
    const auto problem_t0 = std::chrono::steady_clock::now();
    // A backward pass (GradA, GradB) is verified and timed as the plain GEMM it runs, under its own key.
    const GemmProblem gemm = pass_gemm(pp.problem);
    const ProblemBuffers buffers(gemm, device.l2_bytes, (std::uint64_t{entropy()} << 32) | entropy(), stream.get());
    const Verifier verifier(gemm, buffers, stream.get());
    const double policy_lt_error =
        pp.fp32_equivalent_variants.empty()
            ? -1
            : lt_fp32_error(pp.problem, verifier, profile.lt.workspace_bytes, lt.get(), stream.get());
    const std::optional<NoEntryCandidates> no_entry =
        pp.lt_search.empty()
            ? std::nullopt
            : no_entry_candidates(gemm, lt_heuristic_first_of(gemm, lt.get()), profile.lt.workspace_bytes);
    const std::vector<Candidate> candidates = enumerate_candidates(pp, profile.lt, lt.get(), no_entry);
    pr.cost.candidates = static_cast<int>(candidates.size());
    pr.cost.prepare_s = seconds_since(problem_t0);
    auto stage_t0 = std::chrono::steady_clock::now();
    std::vector<TimingStats> first_batches(candidates.size());
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      const bool by_policy = candidates[c].backend == Backend::Own &&
                             std::find(pp.fp32_equivalent_variants.begin(), pp.fp32_equivalent_variants.end(),
                                       candidates[c].own_variant) != pp.fp32_equivalent_variants.end();
      pr.records.push_back(verify_one(pp.problem, candidates[c], buffers, verifier, profile.timing,
                                      profile.lt.workspace_bytes, lt.get(), ctx, by_policy, policy_lt_error,
                                      &first_batches[c]));
    }
    pr.cost.verify_s = seconds_since(stage_t0);
    stage_t0 = std::chrono::steady_clock::now();
    const SamplingCounts counts =
        sample_or_prune(pr.records, first_batches, profile.timing.prune, [&](const MeasurementRecord& r) {
          const CandidateLauncher launcher(r.problem, r.candidate, lt.get(), profile.lt.workspace_bytes);
          return measure_candidate(launcher, buffers, profile.timing, ctx);
        });
    pr.cost.sampled = counts.sampled;
    pr.cost.pruned = counts.pruned;
    pr.cost.sample_s = seconds_since(stage_t0);
    for (MeasurementRecord& r : pr.records) {
      r.device_key = device_key;
      if (r.status == MeasureStatus::VerifyFailed) ++result.verify_failures;
      if (r.status == MeasureStatus::Error) ++result.errors;
    }
    stage_t0 = std::chrono::steady_clock::now();
    if (finalist_stage) {
      try {
        decide_as_program_pays(pr, no_entry, buffers, profile, lt.get(),
                               {finalist_workspace.get(), finalist_workspace.size()},
                               program_flush ? &*program_flush : nullptr, ctx);
      } catch (const Error& e) {  // the ranking stage's records stand; the cache keeps what the program would run
        std::fprintf(stderr, "gemmtune: warning: %s: finalist stage failed (%s); keeping heuristic-first\n",
                     pp.problem.key().c_str(), e.what());
        pr.evidence = {};
        pr.finalists.clear();
        const MeasurementRecord* first = heuristic_first(pr.records);
        pr.kept_record = first ? static_cast<int>(first - pr.records.data()) : -1;
      }
    }
    pr.cost.finalist_s = seconds_since(stage_t0);
    stage_t0 = std::chrono::steady_clock::now();
    if (db) {
      if (const MeasurementRecord* kept = kept_candidate(pr); kept && pr.kept_record >= 0) {
        const CacheDecision decision{kept, pr.evidence};
        db->store_problem(result.run.id, pp.problem, pr.records, &decision);
      } else {
        db->store_problem(result.run.id, pp.problem, pr.records);
      }
    }
    pr.cost.store_s = seconds_since(stage_t0);
    if (const MeasurementRecord* best = kept_candidate(pr); best && profiler) {
      try {
        pr.metrics = measure_metrics(pp.problem, *best, buffers, profile.lt.workspace_bytes, lt.get(), stream.get(),
                                     *profiler, device.identity.gpu_name);
      } catch (const Error& e) {  // counters are extra information: the timings stand without them
        result.metrics_warning = std::string("--metrics stopped: ") + e.what();
        std::fprintf(stderr, "gemmtune: warning: %s\n", result.metrics_warning.c_str());
        profiler.reset();
      }
    }

    if (!options.quiet) {
      const double elapsed = seconds_since(t0);
      const double eta = elapsed / static_cast<double>(i + 1) * static_cast<double>(total - i - 1);
      const MeasurementRecord* best = kept_candidate(pr);
      std::fprintf(stderr, "[%zu/%zu] %s: %zu candidates (%d pruned), best %s %.2f us%s | elapsed %s, ETA %s\n", i + 1,
                   total, pp.problem.key().c_str(), pr.records.size(), pr.cost.pruned,
                   best ? best->candidate.id().c_str() : "(none)",
                   best ? best->stats.median_us : 0.0,
                   pr.evidence.known() ? (", " + pr.evidence.describe()).c_str() : "", clock_text(elapsed).c_str(),
                   clock_text(eta).c_str());
    }
    pr.cost.wall_s = seconds_since(problem_t0);
    result.problems.push_back(std::move(pr));
  }
  if (db) db->finish_run(result.run.id);
  result.run.finished_at = utc_now();
  result.wall_s = seconds_since(start);
  return result;
}

}  // namespace gemmtune
