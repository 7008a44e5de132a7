// Host-side checks of kernels/epilogue.cuh: the same header runs in every kernel, so its bits and formulas are pinned
// down here without a GPU.
#include "kernels/epilogue.cuh"

#include <cmath>

#include <gtest/gtest.h>

namespace gemmtune::kernels {
namespace {

constexpr Activation kAllActivations[] = {Activation::None,    Activation::Relu,    Activation::LeakyRelu,
                                          Activation::Gelu,    Activation::GeluErf, Activation::Sigmoid,
                                          Activation::Tanh};

TEST(Philox, MatchesRandom123KnownAnswerVectors) {
  struct Case {
    Philox4x32Block counter;
    std::uint32_t key0, key1;
    Philox4x32Block expected;
  };
  const Case cases[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
      {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
       0xffffffffu,
       0xffffffffu,
       {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
      {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
       0xa4093822u,
       0x299f31d0u,
       {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
  };
  for (const Case& c : cases) {
    const Philox4x32Block got = philox4x32_10(c.counter, c.key0, c.key1);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(got.word[w], c.expected.word[w]) << "word " << w;
  }
}

TEST(Dropout, UniformDependsOnTheHighHalfOfSeedOffsetAndElement) {
  const std::uint64_t seed = 0x0123456789abcdefull, offset = 42, element = 7;
  const float base = dropout_uniform(seed, offset, element);
  EXPECT_NE(base, dropout_uniform(seed ^ (1ull << 40), offset, element));
  EXPECT_NE(base, dropout_uniform(seed, offset ^ (1ull << 40), element));
  EXPECT_NE(base, dropout_uniform(seed, offset, element ^ (1ull << 40)));
  EXPECT_EQ(base, dropout_uniform(seed, offset, element));
}

TEST(Dropout, KeepNeverFiresForPZeroAndUniformStaysBelowOne) {
  for (std::uint64_t e = 0; e < 10000; ++e) {
    const float u = dropout_uniform(1, 2, e);
    ASSERT_GE(u, 0.f);
    ASSERT_LT(u, 1.f);
    ASSERT_TRUE(dropout_keep(1, 2, e, 0.f));
  }
}

TEST(Activation, DerivativeMatchesCentralFiniteDifference) {
  const double slope = 0.1, h = 1e-6;
  for (Activation act : kAllActivations) {
    for (double z : {-3.0, -1.1, -0.3, 0.2, 0.9, 2.5}) {
      const double numeric = (activation_forward<double>(act, z + h, slope) -
                              activation_forward<double>(act, z - h, slope)) / (2 * h);
      EXPECT_NEAR(activation_derivative<double>(act, z, slope), numeric, 1e-7)
          << to_string(act) << " at z=" << z;
    }
  }
}

TEST(Activation, FloatFormsTrackDoubleFormsToAFewUlps) {
  for (Activation act : kAllActivations) {
    for (float z = -4.f; z <= 4.f; z += 0.37f) {
      const double exact = activation_forward<double>(act, static_cast<double>(z), 0.1);
      const double got = static_cast<double>(activation_forward<float>(act, z, 0.1f));
      EXPECT_NEAR(got, exact, 1e-6 * std::max(1.0, std::fabs(exact))) << to_string(act) << " at z=" << z;
      const double d_exact = activation_derivative<double>(act, static_cast<double>(z), 0.1);
      const double d_got = static_cast<double>(activation_derivative<float>(act, z, 0.1f));
      EXPECT_NEAR(d_got, d_exact, 1e-6 * std::max(1.0, std::fabs(d_exact))) << to_string(act) << "' at z=" << z;
    }
  }
}

TEST(Activation, WithActivationHandsTheRuntimeActivationOverAsACompileTimeConstant) {
  for (Activation act : kAllActivations) {
    Activation seen = act == Activation::None ? Activation::Tanh : Activation::None;
    with_activation(act, [&](auto constant) { seen = decltype(constant)::value; });
    EXPECT_EQ(seen, act) << to_string(act);
  }
}

TEST(EpilogueParams, LeaveZAndBiasNullWhenTheProblemDoesNotUseThem) {
  GemmProblem p;
  p.m = 3;
  p.n = 5;
  p.k = 2;
  GemmOperands x;
  float buffer[4];
  x.Y = buffer;
  x.Z = buffer + 1;
  x.bias = buffer + 2;
  const EpilogueParams e = make_epilogue_params(p, x);
  EXPECT_EQ(e.z, nullptr);
  EXPECT_EQ(e.bias, nullptr);
  p.out = OutputLayout::Transposed;
  EXPECT_EQ(output_index(make_epilogue_params(p, x), 1, 4), 4 * 3 + 1);
}

}  // namespace
}  // namespace gemmtune::kernels
