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

TEST(EpilogueParams, CarryTheDropoutOffsetPointerAndDefaultToTheValueForm) {
  GemmProblem p;
  p.m = p.n = p.k = 4;
  GemmOperands x;
  EXPECT_EQ(x.offset_ptr, nullptr);
  EXPECT_EQ(make_epilogue_params(p, x).offset_ptr, nullptr);
  const std::uint64_t counter = 9;
  x.offset_ptr = &counter;
  EXPECT_EQ(make_epilogue_params(p, x).offset_ptr, &counter);
}

TEST(DropoutOffset, APointerOverridesTheValueAndIsReadWhenUsedNotWhenSet) {
  std::uint64_t counter = 5;
  EXPECT_EQ(dropout_offset(3, nullptr), 3u);
  EXPECT_EQ(dropout_offset(3, &counter), 5u);
  counter = 6;  // what a graph's advance_offset does between two replays
  EXPECT_EQ(dropout_offset(3, &counter), 6u);
}

TEST(DropoutOffset, WithDropoutOffsetReadsThePointerOnceAndOnlyWithDropout) {
  std::uint64_t counter = 1234;
  EpilogueParams e;
  e.offset = 7;
  e.offset_ptr = &counter;
  e.dropout_p = 0.25f;
  const EpilogueParams read = with_dropout_offset(e);
  EXPECT_EQ(read.offset, 1234u);
  EXPECT_EQ(read.offset_ptr, nullptr);  // later elements use the value read, not the pointer
  counter = 99;
  EXPECT_EQ(read.offset, 1234u);
  e.dropout_p = 0.f;
  const EpilogueParams without = with_dropout_offset(e);
  EXPECT_EQ(without.offset, 7u);
  EXPECT_EQ(without.offset_ptr, nullptr);
}

// The fp64 reference's epilogue (epilogue_values<double>, what reference_gemm runs per element) given the offset by
// pointer draws exactly the mask of that offset given by value, and not the mask of the value field it overrides.
TEST(DropoutOffset, TheReferenceEpilogueGivenAPointerMatchesTheValueFormOfThePointedOffset) {
  const std::uint64_t pointed = 0xfedcba9876543210ull;
  EpilogueParams by_value;
  by_value.m = 64;
  by_value.n = 48;
  by_value.act = Activation::Gelu;
  by_value.dropout_p = 0.3f;
  by_value.seed = 0x5eed;
  by_value.offset = pointed;
  EpilogueParams by_pointer = by_value;
  by_pointer.offset = 3;
  by_pointer.offset_ptr = &pointed;
  EpilogueParams other_offset = by_value;
  other_offset.offset = 3;
  int dropped = 0, differs_from_other = 0;
  for (std::int64_t row = 0; row < by_value.m; ++row)
    for (std::int64_t col = 0; col < by_value.n; ++col) {
      const double acc = 0.25 + 0.001 * static_cast<double>(row * by_value.n + col), bias = 0.5;
      const EpilogueValues<double> v = epilogue_values<double>(by_value, row, col, acc, bias);
      const EpilogueValues<double> p = epilogue_values<double>(by_pointer, row, col, acc, bias);
      const EpilogueValues<double> o = epilogue_values<double>(other_offset, row, col, acc, bias);
      ASSERT_EQ(p.y, v.y) << row << "," << col;
      ASSERT_EQ(p.z, v.z) << row << "," << col;
      const bool keep = dropout_keep(by_value.seed, pointed, static_cast<std::uint64_t>(row * by_value.n + col),
                                     by_value.dropout_p);
      EXPECT_EQ(v.y != 0.0, keep) << row << "," << col;
      dropped += keep ? 0 : 1;
      differs_from_other += (o.y != 0.0) != keep ? 1 : 0;
    }
  EXPECT_GT(dropped, 0);
  EXPECT_GT(differs_from_other, 0);
}

}  // namespace
}  // namespace gemmtune::kernels
