#include "runtime/problem_hash.hpp"

#include <set>

#include <gtest/gtest.h>

namespace gemmtune::runtime {
namespace {

GemmProblem base() {
  GemmProblem p;
  p.m = 128;
  p.n = 256;
  p.k = 64;
  return p;
}

TEST(ProblemHash, EqualProblemsHashEqual) {
  GemmProblem a = base(), b = base();
  a.epi.leaky_slope = 0.3f;  // ignored by equality unless the activation is leaky_relu
  ASSERT_EQ(a, b);
  EXPECT_EQ(ProblemHash{}(a), ProblemHash{}(b));
  a.epi.dropout_p = -0.0f;  // == 0
  EXPECT_EQ(ProblemHash{}(a), ProblemHash{}(b));
}

TEST(ProblemHash, EveryFieldChangesTheHash) {
  std::vector<GemmProblem> v(12, base());
  v[1].m = 129;
  v[2].n = 255;
  v[3].k = 65;
  v[4].trans_a = true;
  v[5].trans_b = true;
  v[6].out = OutputLayout::Transposed;
  v[7].epi.bias = true;
  v[8].epi.act = Activation::LeakyRelu;
  v[9] = v[8];
  v[9].epi.leaky_slope = 0.2f;
  v[10].epi.dropout_p = 0.1f;
  v[11].pass = Pass::GradA;
  std::set<std::size_t> hashes;
  for (const GemmProblem& p : v) hashes.insert(ProblemHash{}(p));
  EXPECT_EQ(hashes.size(), v.size());
}

}  // namespace
}  // namespace gemmtune::runtime
