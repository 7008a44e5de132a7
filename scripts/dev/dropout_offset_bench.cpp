// dropout_offset_bench: what reading the dropout offset from device memory (GemmOperands::offset_ptr, the form a
// training loop replayed as a CUDA graph uses, and the form the sweep times) costs against passing it by value, side by
// side in one run, with the sweep's own measurement (CUPTI kernel time, blocking kernel, rotating inputs, the profile's
// stopping rule).
//
//   dropout_offset_bench [--profile NAME|FILE] [--own-per-family N] [--rounds R] [--csv FILE]
//
// Every dropout problem of the profile (default dev_dropout), its own variants (N per family, spread over the ones that
// fit, default 3) and cuBLASLt's first heuristic algo (GEMM + our epilogue kernel). Each candidate is verified in both
// forms, then timed R times per form (default 3), alternating value/pointer and pointer/value so drift cancels; a form's
// time is the median of its rounds' medians, its noise the largest (p90 − p10)/median of its rounds. The table's last
// column says whether |pointer − value| is within that noise. Exit 1 if a candidate fails verification in either form.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "cuda/device_info.hpp"
#include "cuda/stream.hpp"
#include "kernels/registry.hpp"
#include "launch/blocking_kernel.hpp"
#include "launch/candidate_launcher.hpp"
#include "launch/problem_buffers.hpp"
#include "lt/lt_gemm.hpp"
#include "lt/lt_handles.hpp"
#include "problem/pass_gemm.hpp"
#include "profile/sweep_profile.hpp"
#include "tuner/call_timer.hpp"
#include "tuner/measurement_loop.hpp"
#include "tuner/plan.hpp"
#include "tuner/verifier.hpp"

namespace gemmtune {
namespace {

struct Options {
  std::string profile = "dev_dropout";
  int own_per_family = 3;
  int rounds = 3;
  std::string csv;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) throw InputError("option " + arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--profile") {
      o.profile = value;
    } else if (arg == "--own-per-family") {
      o.own_per_family = std::atoi(value.c_str());
    } else if (arg == "--rounds") {
      o.rounds = std::atoi(value.c_str());
    } else if (arg == "--csv") {
      o.csv = value;
    } else {
      throw InputError("unknown option " + arg);
    }
  }
  if (o.own_per_family < 0 || o.rounds < 1) throw InputError("--own-per-family must be >= 0 and --rounds >= 1");
  return o;
}

// n variants of each family out of those that fit the problem: the first, the last and evenly between.
std::vector<Candidate> own_candidates(const PlannedProblem& pp, int per_family) {
  std::map<int, std::vector<std::string>> by_family;
  for (const std::string& name : pp.own_variants)
    if (const kernels::KernelVariant* v = kernels::find_kernel_variant(name))
      by_family[static_cast<int>(v->family)].push_back(name);
  std::vector<Candidate> out;
  for (const auto& [family, names] : by_family) {
    const auto count = static_cast<int>(names.size());
    const int take = std::min(per_family, count);
    for (int i = 0; i < take; ++i) {
      Candidate c;
      c.backend = Backend::Own;
      c.own_variant = names[static_cast<std::size_t>(take == 1 ? 0 : i * (count - 1) / (take - 1))];
      out.push_back(c);
    }
  }
  return out;
}

struct FormTiming {
  std::vector<double> medians;
  double noise = 0;  // the largest (p90 − p10)/median over the rounds
  double median() const {
    std::vector<double> m = medians;
    std::sort(m.begin(), m.end());
    return m[m.size() / 2];
  }
};

struct Row {
  std::string problem, candidate;
  FormTiming value, pointer;
};

int run(const Options& o) {
  const SweepProfile profile = load_sweep_profile(o.profile, default_profiles_dir());
  const SweepPlan plan = make_sweep_plan(profile, {}, {});
  const DeviceInfo device = query_device(0);
  const CudaStream stream;
  const LtHandle lt = make_lt_handle();
  BlockingKernel blocker;
  std::string warning;
  const std::unique_ptr<CallTimer> timer = make_call_timer(false, &warning);
  if (!warning.empty()) std::fprintf(stderr, "dropout_offset_bench: warning: %s\n", warning.c_str());
  MeasureContext ctx{stream.get(), *timer, blocker, {}};
  if (profile.timing.l2_flush) ctx.l2_flush.emplace(device.l2_bytes);

  std::vector<Row> rows;
  int failures = 0;
  for (const PlannedProblem& pp : plan.problems) {
    if (!pp.problem.epi.dropout()) continue;
    const GemmProblem gemm = pass_gemm(pp.problem);
    ProblemBuffers buffers(gemm, device.l2_bytes, 0x5eed0000ull + rows.size(), stream.get());
    const Verifier verifier(gemm, buffers, stream.get());
    std::vector<Candidate> candidates = own_candidates(pp, o.own_per_family);
    if (!pp.lt_search.empty() && pp.lt_unsupported.empty()) {
      const std::vector<Candidate> first =
          LtGemm(lt.get(), gemm, LtEpilogueMode::PreferFused).heuristic(1, profile.lt.workspace_bytes);
      candidates.insert(candidates.end(), first.begin(), first.end());
    }
    for (const Candidate& c : candidates) {
      const CandidateLauncher launcher(pp.problem, c, lt.get(), profile.lt.workspace_bytes);
      bool verified = true;
      for (DropoutOffsetForm form : {DropoutOffsetForm::Value, DropoutOffsetForm::Pointer}) {
        buffers.set_dropout_offset_form(form);
        const Verdict v = verifier.check(launcher, stream.get());
        if (!v.ok) {
          std::fprintf(stderr, "%s %s (%s form): verification failed: %s\n", pp.problem.key().c_str(), c.id().c_str(),
                       form == DropoutOffsetForm::Value ? "value" : "pointer", v.message.c_str());
          verified = false;
        }
      }
      if (!verified) {
        ++failures;
        continue;
      }
      Row row{pp.problem.key(), c.id(), {}, {}};
      for (int r = 0; r < o.rounds; ++r)
        for (int j = 0; j < 2; ++j) {
          const bool pointer = (r + j) % 2 == 1;
          buffers.set_dropout_offset_form(pointer ? DropoutOffsetForm::Pointer : DropoutOffsetForm::Value);
          const TimingStats stats = measure_candidate(launcher, buffers, profile.timing, ctx);
          FormTiming& t = pointer ? row.pointer : row.value;
          t.medians.push_back(stats.median_us);
          t.noise = std::max(t.noise, stats.rel_spread());
        }
      std::fprintf(stderr, "%s %s: value %.2f us, pointer %.2f us\n", row.problem.c_str(), row.candidate.c_str(),
                   row.value.median(), row.pointer.median());
      rows.push_back(row);
    }
  }

  std::FILE* csv = o.csv.empty() ? nullptr : std::fopen(o.csv.c_str(), "w");
  if (!o.csv.empty() && !csv) throw InputError("cannot write " + o.csv);
  if (csv) std::fprintf(csv, "problem,candidate,value_us,pointer_us,delta_pct,noise_pct,within_noise\n");
  std::printf("\n%-54s %-42s %9s %9s %7s %6s %s\n", "problem", "candidate", "value us", "ptr us", "delta%", "noise%",
              "within noise");
  double log_ratio_sum = 0, worst_excess = 0;
  int within = 0;
  for (const Row& r : rows) {
    const double v = r.value.median(), p = r.pointer.median();
    const double delta = 100.0 * (p - v) / v, noise = 100.0 * std::max(r.value.noise, r.pointer.noise);
    const bool ok = std::fabs(delta) <= noise;
    within += ok;
    log_ratio_sum += std::log(p / v);
    worst_excess = std::max(worst_excess, std::fabs(delta) - noise);
    std::printf("%-54s %-42s %9.2f %9.2f %+7.2f %6.2f %s\n", r.problem.c_str(), r.candidate.c_str(), v, p, delta, noise,
                ok ? "yes" : "no");
    if (csv)
      std::fprintf(csv, "%s,%s,%.4f,%.4f,%.4f,%.4f,%d\n", r.problem.c_str(), r.candidate.c_str(), v, p, delta, noise,
                   ok ? 1 : 0);
  }
  if (csv) std::fclose(csv);
  const double geomean = rows.empty() ? 1.0 : std::exp(log_ratio_sum / static_cast<double>(rows.size()));
  std::printf("\n%zu candidates: pointer/value geomean %.4f; |delta| within the noise for %d of %zu; largest excess "
              "over noise %.2f points; %d failed verification\n",
              rows.size(), geomean, within, rows.size(), worst_excess, failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  try {
    return gemmtune::run(gemmtune::parse(argc, argv));
  } catch (const gemmtune::Error& e) {
    std::fprintf(stderr, "dropout_offset_bench: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dropout_offset_bench: %s\n", e.what());
    return 1;
  }
}
