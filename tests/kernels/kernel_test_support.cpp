#include "kernels/kernel_test_support.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>

#include <gtest/gtest.h>

#include "kernels/epilogue.cuh"
#include "kernels/reference_gemm.hpp"
#include "kernels/registry.hpp"
#include "kernels/launch_scratch.hpp"
#include "support/gpu_test.hpp"

namespace gemmtune::test {

std::vector<float> random_floats(std::size_t count, std::uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(count);
  for (float& x : v) {
    do {
      x = dist(rng);
    } while (x == 0.f);
  }
  return v;
}

// cudaMemset on device memory returns before it runs, on the legacy default stream, which a non-blocking stream
// (CudaStream) does not wait for: without the synchronize, the poison could land after the kernel under test wrote
// its output (seen on the H100 when other test processes loaded the GPU).
void poison(DeviceBuffer<float>& buffer) {
  if (buffer.size() == 0) return;
  GT_CUDA_CALL(cudaMemset(buffer.get(), 0xFF, buffer.bytes()));
  GT_CUDA_CALL(cudaDeviceSynchronize());
}

namespace {
std::size_t elements(std::int64_t rows, std::int64_t cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}
}  // namespace

ProblemData::ProblemData(const GemmProblem& problem, std::uint32_t seed)
    : p(problem),
      a(random_floats(elements(problem.m, problem.k), seed * 4 + 1)),
      b(random_floats(elements(problem.k, problem.n), seed * 4 + 2)),
      bias(problem.epi.bias ? random_floats(static_cast<std::size_t>(problem.n), seed * 4 + 3)
                            : std::vector<float>{}),
      A(to_device(a)),
      B(to_device(b)),
      Bias(to_device(bias)),
      Y(elements(problem.m, problem.n)),
      Z(problem.epi.save_z ? elements(problem.m, problem.n) : 0),
      dropout_seed(0x9E3779B97F4A7C15ull ^ seed),
      dropout_offset(seed * 1000003ull) {
  poison(Y);
  poison(Z);
}

GemmOperands ProblemData::operands() const {
  GemmOperands x;
  x.A = A.get();
  x.B = B.get();
  x.bias = p.epi.bias ? Bias.get() : nullptr;
  x.Y = Y.get();
  x.Z = p.epi.save_z ? Z.get() : nullptr;
  x.seed = dropout_seed;
  x.offset = dropout_offset;
  return x;
}

double cpu_activation(Activation act, double z, double slope) {
  const double pi = 3.14159265358979323846;
  switch (act) {
    case Activation::None: return z;
    case Activation::Relu: return std::max(z, 0.0);
    case Activation::LeakyRelu: return z > 0.0 ? z : slope * z;
    case Activation::Gelu: return 0.5 * z * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (z + 0.044715 * z * z * z)));
    case Activation::GeluErf: return 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0)));
    case Activation::Sigmoid: return 1.0 / (1.0 + std::exp(-z));
    case Activation::Tanh: return std::tanh(z);
  }
  return z;
}

void cpu_epilogue(const GemmProblem& p, const std::vector<double>& acc, const std::vector<float>& bias,
                  std::uint64_t seed, std::uint64_t offset, std::vector<double>& y, std::vector<double>* z) {
  y.assign(acc.size(), 0.0);
  if (z) z->assign(acc.size(), 0.0);
  const bool transposed = p.out == OutputLayout::Transposed;
  for (std::int64_t row = 0; row < p.m; ++row) {
    for (std::int64_t col = 0; col < p.n; ++col) {
      const auto at = static_cast<std::size_t>(transposed ? col * p.m + row : row * p.n + col);
      const double pre = acc[at] + (p.epi.bias ? static_cast<double>(bias[static_cast<std::size_t>(col)]) : 0.0);
      double out = cpu_activation(p.epi.act, pre, static_cast<double>(p.epi.leaky_slope));
      if (p.epi.dropout()) {
        const auto element = static_cast<std::uint64_t>(row * p.n + col);
        const double p_drop = static_cast<double>(p.epi.dropout_p);
        out = kernels::dropout_keep(seed, offset, element, p.epi.dropout_p) ? out / (1.0 - p_drop) : 0.0;
      }
      if (z) (*z)[at] = pre;
      y[at] = out;
    }
  }
}

void cpu_reference(const ProblemData& d, std::vector<double>& y, std::vector<double>* z) {
  const GemmProblem& p = d.p;
  std::vector<double> acc(elements(p.m, p.n));
  const bool transposed = p.out == OutputLayout::Transposed;
  for (std::int64_t row = 0; row < p.m; ++row) {
    for (std::int64_t col = 0; col < p.n; ++col) {
      double sum = 0.0;
      for (std::int64_t i = 0; i < p.k; ++i) {
        const float av = d.a[static_cast<std::size_t>(p.trans_a ? i * p.m + row : row * p.k + i)];
        const float bv = d.b[static_cast<std::size_t>(p.trans_b ? col * p.k + i : i * p.n + col)];
        sum += static_cast<double>(av) * static_cast<double>(bv);
      }
      acc[static_cast<std::size_t>(transposed ? col * p.m + row : row * p.n + col)] = sum;
    }
  }
  cpu_epilogue(p, acc, d.bias, d.dropout_seed, d.dropout_offset, y, z);
}

double host_relative_error(const std::vector<float>& out, const std::vector<double>& ref) {
  double diff2 = 0.0, ref2 = 0.0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double o = static_cast<double>(out[i]);
    if (!std::isfinite(o)) return INFINITY;
    diff2 += (o - ref[i]) * (o - ref[i]);
    ref2 += ref[i] * ref[i];
  }
  return ref2 == 0.0 ? (diff2 == 0.0 ? 0.0 : INFINITY) : std::sqrt(diff2 / ref2);
}

double gemm_tolerance(const GemmProblem& p) {
  if (p.mode == MathMode::Tf32) return 1e-3;
  return 1e-6 * std::sqrt(static_cast<double>(p.k));
}

std::vector<GemmProblem> coverage_problems(MathMode mode) {
  struct Shape {
    std::int64_t m, n, k;
  };
  // Each of 1, 7, 127, 255, 1000, 4095 appears once as m, once as n and once as k in the first six.
  const Shape shapes[] = {{1, 127, 4095}, {7, 255, 1000}, {127, 4095, 1},   {255, 1000, 7},
                          {1000, 1, 255}, {4095, 7, 127}, {512, 384, 1000}, {132, 260, 516}};
  constexpr Activation kActivations[] = {Activation::None,    Activation::Relu,    Activation::LeakyRelu,
                                         Activation::Gelu,    Activation::GeluErf, Activation::Sigmoid,
                                         Activation::Tanh};
  std::vector<GemmProblem> problems;
  int index = 0;
  for (int layout = 0; layout < 4; ++layout) {
    for (Activation act : kActivations) {
      const Shape& s = shapes[index % 8];
      GemmProblem p;
      p.m = s.m;
      p.n = s.n;
      p.k = s.k;
      p.trans_a = layout & 1;
      p.trans_b = (layout & 2) != 0;
      p.out = index / 2 % 2 ? OutputLayout::Transposed : OutputLayout::RowMajor;
      p.epi.bias = index % 5 != 3;
      p.epi.act = act;
      p.epi.leaky_slope = 0.05f;
      p.epi.save_z = index % 3 == 0;
      p.epi.dropout_p = index % 4 == 1 ? 0.2f : 0.f;
      p.mode = mode;
      problems.push_back(p);
      ++index;
    }
  }
  return problems;
}

VariantErrors run_against_reference(const kernels::KernelVariant& v, const GemmProblem& p, std::uint32_t seed,
                                    int skew, int y_skew) {
  ProblemData d(p, seed);
  const std::size_t count = elements(p.m, p.n);
  DeviceBuffer<double> y_ref(count), z_ref(p.epi.save_z ? count : 0);
  kernels::reference_gemm(p, d.operands(), y_ref.get(), z_ref.get(), nullptr);
  GemmOperands x = d.operands();
  DeviceBuffer<float> skewed_a(skew > 0 ? d.a.size() + 4 : 0), skewed_b(skew > 0 ? d.b.size() + 4 : 0);
  if (skew > 0) {
    GT_CUDA_CALL(cudaMemcpy(skewed_a.get() + skew, d.A.get(), d.A.bytes(), cudaMemcpyDeviceToDevice));
    GT_CUDA_CALL(cudaMemcpy(skewed_b.get() + skew, d.B.get(), d.B.bytes(), cudaMemcpyDeviceToDevice));
    x.A = skewed_a.get() + skew;
    x.B = skewed_b.get() + skew;
  }
  DeviceBuffer<float> skewed_y(y_skew > 0 ? count + 4 : 0), skewed_z(y_skew > 0 && p.epi.save_z ? count + 4 : 0);
  if (y_skew > 0) {
    poison(skewed_y);
    poison(skewed_z);
    x.Y = skewed_y.get() + y_skew;
    x.Z = p.epi.save_z ? skewed_z.get() + y_skew : nullptr;
  }
  const kernels::LaunchScratchBuffer scratch(v, p);
  v.launch(p, x, scratch.view(), nullptr);
  GT_CUDA_CALL(cudaGetLastError());
  VariantErrors e;
  const auto count64 = static_cast<std::int64_t>(count);
  e.y = kernels::relative_frobenius_error(x.Y, y_ref.get(), count64, nullptr);
  if (p.epi.save_z) e.z = kernels::relative_frobenius_error(x.Z, z_ref.get(), count64, nullptr);
  for (const DeviceBuffer<float>* skewed : {&skewed_y, &skewed_z}) {
    if (skewed->size() == 0) continue;
    const std::vector<float> all = to_host(skewed->get(), skewed->size());
    for (std::size_t i = 0; i < all.size(); ++i)
      if ((i < static_cast<std::size_t>(y_skew) || i >= count + static_cast<std::size_t>(y_skew)) && !std::isnan(all[i]))
        ++e.stray_writes;
  }
  return e;
}

bool left_to_its_twin(const kernels::KernelVariant& v, const GemmProblem& p) {
  return (v.staged && v.staging_floats(p) == 0) || (v.stages_b && &kernels::alignment_twin(v, p) != &v) ||
         (v.stream_k && !kernels::stream_k_unsupported_reason(v, p).empty());
}

namespace {

void check_each_variant(kernels::Family family, const std::vector<GemmProblem>* given) {
  std::uint32_t seed = 1000;
  int variants = 0, variants_checked = 0;
  std::string why_not_on_this_gpu;
  for (const kernels::KernelVariant& v : kernels::kernel_registry()) {
    if (v.family != family) continue;
    ++variants;
    if (const std::string why = v.device_unsupported_reason(); !why.empty()) {
      std::cout << "[ skipped  ] " << v.name << ": " << why << "\n";
      why_not_on_this_gpu = why;
      continue;
    }
    ++variants_checked;
    double worst = 0.0, worst_over_tolerance = 0.0;
    const std::vector<GemmProblem> problems = given ? *given : coverage_problems(v.mode);
    int checked = 0;
    for (GemmProblem p : problems) {
      p.mode = v.mode;  // a family may serve two modes (skinny: fp32 and tf32) with one list of problems
      if (left_to_its_twin(v, p)) continue;
      ++checked;
      ASSERT_EQ(v.unsupported_reason(p), "") << v.name << " " << p.key();
      const VariantErrors e = run_against_reference(v, p, seed++);
      const double tol = gemm_tolerance(p);
      ASSERT_LE(e.y, tol) << v.name << " Y of " << p.key();
      ASSERT_LE(e.z, tol) << v.name << " Z of " << p.key();
      worst = std::max({worst, e.y, e.z});
      worst_over_tolerance = std::max({worst_over_tolerance, e.y / tol, e.z / tol});
    }
    if (checked == 0 && v.stream_k) {  // WgmmaGemm.StreamKMatchesFp64ReferenceAndRepeatsBitForBit runs it
      std::cout << "[ skipped  ] " << v.name << ": Stream-K streams none of these problems\n";
      continue;
    }
    ASSERT_GT(checked, 0) << v.name << ": every problem of the set is left to its twin";
    std::cout << "[ checked  ] " << v.name << ": " << checked << " problems, max relative error " << worst
              << " (max error/tolerance " << worst_over_tolerance << ")\n";
  }
  EXPECT_GE(variants, 2) << "variants of family " << kernels::to_string(family);  // one tile serves two modes
  if (variants_checked == 0)
    GT_SKIP_GPU_TEST() << "no " << kernels::to_string(family) << " variant runs on this GPU: " << why_not_on_this_gpu;
}

}  // namespace

void check_family_against_reference(kernels::Family family) { check_each_variant(family, nullptr); }

void check_family_against_reference(kernels::Family family, const std::vector<GemmProblem>& problems) {
  check_each_variant(family, &problems);
}

}  // namespace gemmtune::test
