#include "problem/pass_gemm.hpp"

#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace gemmtune {
namespace {

// Element (r, c) of a logical rows×cols operand stored row-major, or transposed (stored cols×rows).
double at(const std::vector<double>& v, bool transposed, std::int64_t rows, std::int64_t cols, std::int64_t r,
          std::int64_t c) {
  return transposed ? v[static_cast<std::size_t>(c * rows + r)] : v[static_cast<std::size_t>(r * cols + c)];
}

// Y = op(A)·op(B) of a plain forward problem, stored in its output layout: the reading of a GemmProblem every
// backend implements, written out here independently.
std::vector<double> forward_gemm(const GemmProblem& g, const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> y(static_cast<std::size_t>(g.m * g.n));
  for (std::int64_t r = 0; r < g.m; ++r)
    for (std::int64_t c = 0; c < g.n; ++c) {
      double s = 0;
      for (std::int64_t i = 0; i < g.k; ++i) s += at(a, g.trans_a, g.m, g.k, r, i) * at(b, g.trans_b, g.k, g.n, i, c);
      const bool t = g.out == OutputLayout::Transposed;
      y[static_cast<std::size_t>(t ? c * g.m + r : r * g.n + c)] = s;
    }
  return y;
}

std::vector<double> random_values(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

// For every layout and output layout: gA and gB from their pass GEMMs equal the textbook gradients of
// Y = op(A)·op(B) given gZ, each stored the way A, B and Y are stored.
TEST(PassGemm, BackwardGemmsComputeTheGradientsInTheOperandsLayouts) {
  std::mt19937 rng(7);
  const std::int64_t m = 5, n = 4, k = 3;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (OutputLayout out : {OutputLayout::RowMajor, OutputLayout::Transposed}) {
        GemmProblem p;
        p.m = m;
        p.n = n;
        p.k = k;
        p.trans_a = ta;
        p.trans_b = tb;
        p.out = out;
        p.epi.bias = true;
        const auto a = random_values(m * k, rng), b = random_values(k * n, rng), gz = random_values(m * n, rng);
        const bool tz = out == OutputLayout::Transposed;

        const GemmProblem pa = backward_problem(p, Pass::GradA), pb = backward_problem(p, Pass::GradB);
        const GemmProblem ga = pass_gemm(pa), gb = pass_gemm(pb);
        EXPECT_EQ(ga.pass, Pass::Forward);
        EXPECT_EQ(ga.epi, Epilogue{});
        const std::vector<double> grad_a = forward_gemm(ga, gz, b);  // A' = gZ, B' = B
        const std::vector<double> grad_b = forward_gemm(gb, a, gz);  // A' = A, B' = gZ

        for (std::int64_t r = 0; r < m; ++r)
          for (std::int64_t i = 0; i < k; ++i) {
            double want = 0;  // dL/dA(r,i) = Σ_c gZ(r,c)·op(B)(i,c)
            for (std::int64_t c = 0; c < n; ++c) want += at(gz, tz, m, n, r, c) * at(b, tb, k, n, i, c);
            EXPECT_NEAR(at(grad_a, ta, m, k, r, i), want, 1e-12) << p.key();
          }
        for (std::int64_t i = 0; i < k; ++i)
          for (std::int64_t c = 0; c < n; ++c) {
            double want = 0;  // dL/dB(i,c) = Σ_r op(A)(r,i)·gZ(r,c)
            for (std::int64_t r = 0; r < m; ++r) want += at(a, ta, m, k, r, i) * at(gz, tz, m, n, r, c);
            EXPECT_NEAR(at(grad_b, tb, k, n, i, c), want, 1e-12) << p.key();
          }
      }
}

TEST(PassGemm, BackwardKeysCarryTheForwardsShapeLayoutAndModeWithNoEpilogue) {
  GemmProblem p = GemmProblem::parse_key("fwd:300x200x100:tn:col:bias+gelu+z+dropout=0.1:fp32");
  EXPECT_EQ(backward_problem(p, Pass::GradA).key(), "bwd_a:300x200x100:tn:col:none:fp32");
  EXPECT_EQ(backward_problem(p, Pass::GradB).key(), "bwd_b:300x200x100:tn:col:none:fp32");
}

TEST(PassGemm, AForwardProblemIsItsOwnGemm) {
  GemmProblem p;
  p.m = 7;
  p.n = 9;
  p.k = 11;
  p.epi.act = Activation::Gelu;
  EXPECT_EQ(pass_gemm(p), p);
}

}  // namespace
}  // namespace gemmtune
