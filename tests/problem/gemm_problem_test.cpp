#include "problem/gemm_problem.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace gemmtune {
namespace {

GemmProblem full_problem() {
  GemmProblem p;
  p.m = 1000;
  p.n = 7;
  p.k = 4095;
  p.trans_a = true;
  p.out = OutputLayout::Transposed;
  p.epi.bias = true;
  p.epi.act = Activation::LeakyRelu;
  p.epi.leaky_slope = 0.125f;
  p.epi.save_z = true;
  p.epi.dropout_p = 0.1f;
  p.mode = MathMode::Tf32x3;
  return p;
}

TEST(GemmProblemKey, IsReadableAndStable) {
  GemmProblem p;
  p.m = p.n = p.k = 1024;
  p.epi.bias = true;
  p.epi.act = Activation::Gelu;
  p.epi.save_z = true;
  EXPECT_EQ(p.key(), "fwd:1024x1024x1024:nn:row:bias+gelu+z:tf32");
  EXPECT_EQ(full_problem().key(), "fwd:1000x7x4095:tn:col:bias+leaky_relu=0.125+z+dropout=0.1:3xtf32");
}

TEST(GemmProblemKey, RoundTripsEveryField) {
  const GemmProblem p = full_problem();
  EXPECT_EQ(GemmProblem::parse_key(p.key()), p);
  for (Activation a : {Activation::None, Activation::Relu, Activation::Gelu, Activation::GeluErf, Activation::Sigmoid,
                       Activation::Tanh}) {
    GemmProblem q = p;
    q.epi.act = a;
    q.pass = Pass::GradB;
    EXPECT_EQ(GemmProblem::parse_key(q.key()), q) << q.key();
  }
}

TEST(GemmProblemKey, KindKeyIgnoresOnlyTheShape) {
  GemmProblem a = full_problem(), b = full_problem();
  b.m = 3;
  EXPECT_EQ(a.kind_key(), b.kind_key());
  b.mode = MathMode::Fp32;
  EXPECT_NE(a.kind_key(), b.kind_key());
}

TEST(GemmProblemKey, RejectsMalformedKeysWithInputError) {
  for (const char* bad : {"", "fwd:1x1x1:nn:row:none", "fwd:1x1:nn:row:none:tf32", "fwd:axbxc:nn:row:none:tf32",
                          "fwd:1x1x1:xn:row:none:tf32", "fwd:1x1x1:nn:diag:none:tf32", "fwd:1x1x1:nn:row:swish:tf32",
                          "fwd:1x1x1:nn:row:none:fp16", "up:1x1x1:nn:row:none:tf32", "fwd:-4x1x1:nn:row:none:tf32",
                          "fwd:0x1x1:nn:row:none:tf32", "fwd:1x1x1:nn:row:dropout=1.5:tf32"})
    EXPECT_THROW(GemmProblem::parse_key(bad), InputError) << bad;
}

// "relu+gelu" or "bias+bias" would otherwise mean whichever came last; NaN dropout would pass every later check.
TEST(EpilogueSpec, RefusesRepeatedPartsAndOutOfRangeValues) {
  for (const char* bad : {"relu+gelu", "bias+bias", "z+z", "dropout=0.1+dropout=0.2", "relu+leaky_relu=0.1",
                          "bias+none", "dropout=nan", "dropout=-0.1", "dropout=1", "leaky_relu=inf", "bias+", "+bias", ""})
    EXPECT_THROW(Epilogue::parse(bad), InputError) << bad;
  EXPECT_EQ(Epilogue::parse("z+bias+relu").key(), "bias+relu+z");
}

TEST(GemmProblemValidate, RejectsNonPositiveShapesAndBadDropout) {
  GemmProblem p;
  p.m = 16;
  p.n = 0;
  p.k = 16;
  EXPECT_THROW(p.validate(), InputError);
  p.n = 16;
  p.epi.dropout_p = -0.1f;
  EXPECT_THROW(p.validate(), InputError);
  p.epi.dropout_p = 0.5f;
  EXPECT_NO_THROW(p.validate());
}

TEST(GemmProblemLayout, LeadingDimensionsFollowTheStoredShapes) {
  GemmProblem p;
  p.m = 3;
  p.n = 5;
  p.k = 7;
  EXPECT_EQ(p.lda(), 7);
  EXPECT_EQ(p.ldb(), 5);
  EXPECT_EQ(p.ldy(), 5);
  p.trans_a = p.trans_b = true;
  p.out = OutputLayout::Transposed;
  EXPECT_EQ(p.lda(), 3);
  EXPECT_EQ(p.ldb(), 7);
  EXPECT_EQ(p.ldy(), 3);
}

TEST(GemmProblemJson, RoundTripsThroughTheKey) {
  const GemmProblem p = full_problem();
  const nlohmann::json j = p;
  EXPECT_EQ(j["m"], 1000);
  EXPECT_EQ(j["layout"], "tn");
  EXPECT_EQ(j.get<GemmProblem>(), p);
}

TEST(GemmOperands, DefaultToTheDropoutOffsetByValue) {
  const GemmOperands x;
  EXPECT_EQ(x.seed, 0u);
  EXPECT_EQ(x.offset, 0u);
  EXPECT_EQ(x.offset_ptr, nullptr);
}

}  // namespace
}  // namespace gemmtune
