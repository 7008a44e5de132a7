#include "tuner/accuracy_benchmark.hpp"

#include <cstdio>
#include <optional>
#include <random>

#include "common/error.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/device_info.hpp"
#include "cuda/stream.hpp"
#include "kernels/reference_gemm.hpp"
#include "kernels/registry.hpp"
#include "launch/candidate_launcher.hpp"
#include "launch/random_fill.hpp"
#include "lt/lt_gemm.hpp"

namespace gemmtune {
namespace {

constexpr float kWideMaxExponent = 8.0f;

// One grid point's shape: m × n × k, or with every row off a 16-byte boundary (odd m and n, k ≡ 3 mod 4).
struct PointShape {
  std::int64_t m, n, k;
};

std::vector<PointShape> point_shapes(const AccuracySettings& s, std::int64_t k) {
  std::vector<PointShape> out{{s.m, s.n, k}};
  if (s.unaligned) out.push_back({s.m | 1, s.n | 1, k | 3});
  return out;
}

GemmProblem plain_problem(const PointShape& shape, MathMode mode) {
  GemmProblem p;
  p.m = shape.m;
  p.n = shape.n;
  p.k = shape.k;
  p.mode = mode;
  p.validate();
  return p;
}

// One (k, distribution) point: its inputs, fp64 reference and output, shared by every candidate.
class AccuracyPoint {
 public:
  AccuracyPoint(const GemmProblem& p, InputDistribution dist, std::uint64_t seed, cudaStream_t s)
      : a_(static_cast<std::size_t>(p.m * p.k)),
        b_(static_cast<std::size_t>(p.k * p.n)),
        y_(static_cast<std::size_t>(p.m * p.n)),
        y_ref_(y_.size()) {
    for (auto [buffer, salt] : {std::pair{&a_, 1ull}, std::pair{&b_, 2ull}}) {
      if (dist == InputDistribution::Uniform || dist == InputDistribution::Positive)
        fill_uniform(buffer->get(), buffer->size(), seed * 4 + salt, dist == InputDistribution::Uniform ? -1.0f : 0.0f,
                     1.0f, s);
      else
        fill_wide_exponent(buffer->get(), buffer->size(), seed * 4 + salt, kWideMaxExponent, s);
    }
    kernels::reference_gemm(p, operands(), y_ref_.get(), nullptr, s);
    GT_CUDA_CALL(cudaStreamSynchronize(s));
  }

  GemmOperands operands() const {
    GemmOperands x;
    x.A = a_.get();
    x.B = b_.get();
    x.Y = y_.get();
    return x;
  }

  // Poisons Y, runs the candidate once, and returns its error. Synchronizes s.
  kernels::OutputError error_of(const CandidateLauncher& launcher, cudaStream_t s) const {
    fill_nan(y_.get(), y_.size(), s);
    launcher.launch(operands(), s);
    return kernels::output_error(y_.get(), y_ref_.get(), static_cast<std::int64_t>(y_.size()), s);
  }

 private:
  DeviceBuffer<float> a_, b_, y_;
  DeviceBuffer<double> y_ref_;
};

// cuBLASLt's first heuristic algo for p, or a reason in `why`.
std::optional<Candidate> lt_first_choice(const GemmProblem& p, cublasLtHandle_t h, std::size_t workspace,
                                         std::string& why) {
  why = LtGemm::unsupported_reason(p);
  if (!why.empty()) return std::nullopt;
  const std::vector<Candidate> top = LtGemm(h, p).heuristic(1, workspace);
  if (top.empty()) {
    why = "cuBLASLt's heuristic answered no algo";
    return std::nullopt;
  }
  return top.front();
}

}  // namespace

AccuracyResult run_accuracy_benchmark(const AccuracySettings& settings, int device, bool quiet) {
  const DeviceInfo info = query_device(device);
  AccuracyResult result;
  result.device = info.identity;
  result.m = settings.m;
  result.n = settings.n;
  result.seed = settings.seed != 0 ? settings.seed : (std::uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  const CudaStream stream;
  const cudaStream_t s = stream.get();
  const LtHandle lt = make_lt_handle();

  std::uint64_t point_seed = result.seed;
  std::vector<PointShape> shapes;
  for (const std::int64_t k : settings.ks)
    for (const PointShape& shape : point_shapes(settings, k)) shapes.push_back(shape);
  for (const PointShape& shape : shapes) {
    const std::int64_t k = shape.k;
    for (const InputDistribution dist : settings.dists) {
      const AccuracyPoint point(plain_problem(shape, MathMode::Fp32), dist, ++point_seed, s);
      std::vector<AccuracyRecord> point_records;
      auto skip = [&](MathMode mode, const std::string& candidate, const std::string& why) {
        if (dist == settings.dists.front()) result.skipped.push_back({mode, candidate, k, why});
      };
      auto measure = [&](const GemmProblem& p, const Candidate& c) {
        const CandidateLauncher launcher(p, c, lt.get(), settings.workspace_bytes);
        const kernels::OutputError e = point.error_of(launcher, s);
        point_records.push_back({p.mode, c.id(), k, dist, e.rel_err, 0, shape.m, shape.n, e.scale_bias});
      };

      // cuBLASLt first: its fp32 error is every record's yardstick. It is measured even when fp32 is not asked for.
      double lt_fp32_error = -1, lt_fp32_bias = 0;
      for (const MathMode mode : {MathMode::Fp32, MathMode::Tf32}) {
        const GemmProblem p = plain_problem(shape, mode);
        std::string why;
        const std::optional<Candidate> c = lt_first_choice(p, lt.get(), settings.workspace_bytes, why);
        if (!c) {
          skip(mode, "lt (heuristic first)", why);
          continue;
        }
        measure(p, *c);
        if (mode == MathMode::Fp32) {
          lt_fp32_error = point_records.back().rel_err;
          lt_fp32_bias = point_records.back().scale_bias;
        }
      }
      // Where rows are not aligned, the sweep's candidates on padded copies: cuBLASLt's first algo there, per mode.
      for (const MathMode mode : {MathMode::Fp32, MathMode::Tf32}) {
        const GemmProblem p = plain_problem(shape, mode);
        if (!LtGemm::padding_unsupported_reason(p).empty()) continue;
        const std::vector<Candidate> padded =
            LtGemm(lt.get(), p, LtEpilogueMode::Padded).heuristic(1, settings.workspace_bytes);
        if (padded.empty()) {
          skip(mode, "lt (heuristic first)+pad", "cuBLASLt's heuristic answered no algo for the padded GEMM");
          continue;
        }
        measure(p, padded.front());
      }
      for (const MathMode mode : settings.modes) {
        const GemmProblem p = plain_problem(shape, mode);
        for (const kernels::KernelVariant& v : kernels::kernel_registry()) {
          if (v.mode != mode) continue;
          Candidate c;
          c.backend = Backend::Own;
          c.own_variant = v.name;
          const std::string why = CandidateLauncher::unsupported_reason(p, c, nullptr, settings.workspace_bytes);
          if (!why.empty()) {
            skip(mode, c.id(), why);
            continue;
          }
          measure(p, c);
        }
      }
      for (AccuracyRecord& r : point_records) {
        r.lt_fp32_rel_err = lt_fp32_error;
        r.lt_fp32_scale_bias = lt_fp32_bias;
        // cuBLASLt tf32 is context, not a grid mode of ours: it stays even when tf32 is not in settings.modes.
        result.records.push_back(r);
      }
      if (!quiet)
        std::fprintf(stderr, "accuracy: %lldx%lldx%lld %s: %zu candidates, cuBLASLt fp32 error %.3g\n",
                     static_cast<long long>(shape.m), static_cast<long long>(shape.n), static_cast<long long>(k),
                     to_string(dist), point_records.size(), lt_fp32_error);
    }
  }
  return result;
}

}  // namespace gemmtune
