#include "kernels/kernel_test_support.hpp"

#include <cmath>
#include <random>

#include "kernels/epilogue.cuh"

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

void poison(DeviceBuffer<float>& buffer) {
  if (buffer.size() > 0) GT_CUDA_CALL(cudaMemset(buffer.get(), 0xFF, buffer.bytes()));
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

}  // namespace gemmtune::test
