#include "lt/lt_padding.hpp"

#include <gtest/gtest.h>

#include "support/tuning_fixtures.hpp"

namespace gemmtune {
namespace {

// A tf32 bias+gelu problem (test_problem) that also saves Z, in the given layouts.
GemmProblem gemm(std::int64_t m, std::int64_t n, std::int64_t k, bool trans_a = false, bool trans_b = false,
                 OutputLayout out = OutputLayout::RowMajor) {
  GemmProblem p = test::test_problem(m, n, k);
  p.trans_a = trans_a;
  p.trans_b = trans_b;
  p.out = out;
  p.epi.save_z = true;
  return p;
}

TEST(LtPadding, AlignedRowsHaveNothingToPadWhateverTheOtherDimensions) {
  EXPECT_FALSE(lt_padding(gemm(692, 5576, 7560)));
  // m is no stored matrix's leading dimension in a row-major NN problem: 693 rows need no padding.
  EXPECT_FALSE(lt_padding(gemm(693, 5576, 7560)));
}

TEST(LtPadding, RowMajorNnPadsKAndNIntoZeroFilledCopiesAndAPaddedPlainOutput) {
  const auto pad = lt_padding(gemm(692, 5577, 7561));
  ASSERT_TRUE(pad);
  EXPECT_EQ(pad->padded.m, 692);
  EXPECT_EQ(pad->padded.n, 5580);
  EXPECT_EQ(pad->padded.k, 7564);
  EXPECT_TRUE(pad->padded.epi == Epilogue{}) << "the epilogue runs after, from the padded output";
  EXPECT_EQ(pad->padded.mode, MathMode::Tf32);
  // A 692x7561 -> 692x7564, B 7561x5577 -> 7564x5580 (its extra rows are k's padding), D 692x5580.
  EXPECT_EQ(pad->a.padded_rows, 692);
  EXPECT_EQ(pad->a.padded_cols, 7564);
  EXPECT_EQ(pad->b.rows, 7561);
  EXPECT_EQ(pad->b.padded_rows, 7564);
  EXPECT_EQ(pad->b.padded_cols, 5580);
  EXPECT_EQ(pad->y.padded_cols, 5580);
  EXPECT_EQ(pad->a_at, 0u);
  EXPECT_EQ(pad->b_at % 64, 0u);
  EXPECT_GE(pad->b_at, pad->a.padded_floats());
  EXPECT_GE(pad->d_at, pad->b_at + pad->b.padded_floats());
  EXPECT_EQ(pad->floats, pad->d_at + 692u * 5580u);
}

TEST(LtPadding, AnOperandWhoseStoredShapeDoesNotChangeIsReadInPlaceAndTakesNoScratch) {
  // Only n is unaligned: A (m x k) keeps its shape, B (k x n) and Y are padded.
  const auto pad = lt_padding(gemm(512, 1001, 1024));
  ASSERT_TRUE(pad);
  EXPECT_FALSE(pad->a.changes());
  EXPECT_TRUE(pad->b.changes());
  EXPECT_EQ(pad->b_at, 0u);
  EXPECT_EQ(pad->padded.k, 1024);
}

TEST(LtPadding, APaddedCallCopiesTheOperandsThatChangeAndReadsTheOthersInPlace) {
  float a[1] = {}, b[1] = {}, y[1] = {}, scratch[1] = {};
  GemmOperands x;
  x.A = a;
  x.B = b;
  x.Y = y;
  const auto both = lt_padding(gemm(692, 5577, 7561));
  ASSERT_TRUE(both);
  const PaddedCall call = padded_call(*both, x, scratch);
  ASSERT_EQ(call.n_copies, 2);
  EXPECT_EQ(call.copies[0].src, x.A);
  EXPECT_EQ(call.copies[0].ld_src, 7561);
  EXPECT_EQ(call.copies[0].dst, scratch + both->a_at);
  EXPECT_EQ(call.copies[0].ld_dst, 7564);
  EXPECT_EQ(call.copies[0].rows, 692);
  EXPECT_EQ(call.copies[1].src, x.B);
  EXPECT_EQ(call.copies[1].dst, scratch + both->b_at);
  EXPECT_EQ(call.copies[1].ld_dst, 5580);
  EXPECT_EQ(call.a, scratch + both->a_at);
  EXPECT_EQ(call.b, scratch + both->b_at);
  EXPECT_EQ(call.d, scratch + both->d_at);
  // k aligned, n not: A keeps its rows and is read where it is; only B is copied.
  const auto b_only = lt_padding(gemm(692, 5577, 7560));
  ASSERT_TRUE(b_only);
  const PaddedCall one = padded_call(*b_only, x, scratch);
  ASSERT_EQ(one.n_copies, 1);
  EXPECT_EQ(one.copies[0].src, x.B);
  EXPECT_EQ(one.a, x.A);
  EXPECT_EQ(one.b, scratch + b_only->b_at);
}

TEST(LtPadding, WhereOnlyKIsPaddedTheOutputKeepsItsShapeAndCuBlasLtWritesItInPlace) {
  // k unaligned, n aligned: A and B are copied (k's zero columns and rows), Y (692x5576) is the padded product's own
  // shape, so the scratch holds the copies alone and the call has no D.
  const auto pad = lt_padding(gemm(692, 5576, 7561));
  ASSERT_TRUE(pad);
  EXPECT_FALSE(pad->y.changes());
  EXPECT_TRUE(pad->a.changes());
  EXPECT_TRUE(pad->b.changes());
  EXPECT_EQ(pad->floats, pad->d_at);
  EXPECT_GE(pad->d_at, pad->b_at + pad->b.padded_floats());
  float a[1] = {}, b[1] = {}, y[1] = {}, scratch[1] = {};
  GemmOperands x;
  x.A = a;
  x.B = b;
  x.Y = y;
  const PaddedCall call = padded_call(*pad, x, scratch);
  EXPECT_EQ(call.n_copies, 2);
  EXPECT_EQ(call.d, nullptr);
}

TEST(LtPadding, TransposedLayoutsPadTheDimensionsThatAreTheirLeadingOnes) {
  // A stored k x m (ld m) and Y stored n x m (ld m): m is padded; B stored n x k (ld k): k is padded; n is the ld of
  // nothing stored here, so it stays.
  const auto pad = lt_padding(gemm(333, 201, 199, true, true, OutputLayout::Transposed));
  ASSERT_TRUE(pad);
  EXPECT_EQ(pad->padded.m, 336);
  EXPECT_EQ(pad->padded.n, 201);
  EXPECT_EQ(pad->padded.k, 200);
  EXPECT_EQ(pad->a.rows, 199);
  EXPECT_EQ(pad->a.padded_rows, 200);
  EXPECT_EQ(pad->a.padded_cols, 336);
  EXPECT_EQ(pad->b.padded_rows, 201);
  EXPECT_EQ(pad->b.padded_cols, 200);
  EXPECT_EQ(pad->y.rows, 201);
  EXPECT_EQ(pad->y.padded_cols, 336);
}

}  // namespace
}  // namespace gemmtune
