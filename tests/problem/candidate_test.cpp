#include "problem/candidate.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace gemmtune {
namespace {

Candidate lt_candidate() {
  Candidate c;
  c.backend = Backend::Lt;
  c.lt = {21, 18, 8, 4, 2, 1, 3, 16, 5};
  c.heuristic_rank = 2;
  return c;
}

TEST(CandidateId, LtAlgoIsSpelledFieldByField) {
  EXPECT_EQ(lt_candidate().id(), "lt/a21-t18-s8-k4-r2-w1-c3-cl16-i5");
}

TEST(CandidateId, RoundTripsLtAlgoFieldsAndTheEpilogueKernelFlag) {
  Candidate c = lt_candidate();
  c.lt_epilogue_kernel = true;
  const Candidate back = Candidate::parse_id(c.id());
  EXPECT_EQ(back.backend, Backend::Lt);
  EXPECT_EQ(back.lt, c.lt);
  EXPECT_TRUE(back.lt_epilogue_kernel);
  EXPECT_EQ(back.id(), c.id());
}

TEST(CandidateId, APaddedCandidateIsSpelledPadAndReadsBackPaddedWithOurEpilogueKernel) {
  Candidate c = lt_candidate();
  c.lt_epilogue_kernel = true;
  c.lt_padded = true;
  EXPECT_EQ(c.id(), "lt/a21-t18-s8-k4-r2-w1-c3-cl16-i5+pad");
  const Candidate back = Candidate::parse_id(c.id());
  EXPECT_TRUE(back.lt_padded);
  EXPECT_TRUE(back.lt_epilogue_kernel);
  EXPECT_EQ(back.lt, c.lt);
  EXPECT_FALSE(Candidate::parse_id("lt/a21-t18-s8-k4-r2-w1-c3-cl16-i5+epi").lt_padded);
  EXPECT_THROW(Candidate::parse_id("lt/a21-t18-s8-k4-r2-w1-c3-cl16-i5+epi+pad"), InputError);
}

TEST(CandidateId, ABiasInGemmCandidateIsSpelledBiasAndReadsBackWithOurEpilogueKernelNotPadded) {
  Candidate c = lt_candidate();
  c.lt_epilogue_kernel = true;
  c.lt_bias_in_gemm = true;
  EXPECT_EQ(c.id(), "lt/a21-t18-s8-k4-r2-w1-c3-cl16-i5+bias");
  const Candidate back = Candidate::parse_id(c.id());
  EXPECT_TRUE(back.lt_bias_in_gemm);
  EXPECT_TRUE(back.lt_epilogue_kernel);
  EXPECT_FALSE(back.lt_padded);
  EXPECT_EQ(back.lt, c.lt);
  EXPECT_FALSE(Candidate::parse_id("lt/a21-t18-s8-k4-r2-w1-c3-cl16-i5+epi").lt_bias_in_gemm);
  EXPECT_FALSE(Candidate::parse_id("lt/a21-t18-s8-k4-r2-w1-c3-cl16-i5+pad").lt_bias_in_gemm);
  EXPECT_THROW(Candidate::parse_id("lt/a21-t18-s8-k4-r2-w1-c3-cl16-i5+bias+epi"), InputError);
  EXPECT_THROW(Candidate::parse_id("lt/a21-t18-s8-k4-r2-w1-c3-cl16-i5+bias+pad"), InputError);
}

TEST(CandidateId, RoundTripsOwnVariantNames) {
  Candidate c;
  c.backend = Backend::Own;
  c.own_variant = "tf32_128x128x32_w64x64_s3";
  EXPECT_EQ(c.id(), "own/tf32_128x128x32_w64x64_s3");
  EXPECT_EQ(Candidate::parse_id(c.id()).own_variant, c.own_variant);
}

TEST(CandidateId, CuBLASsOwnChoiceIsCublasGemmexAndReadsBackAsTheBlasBackend) {
  Candidate c;
  c.backend = Backend::Blas;
  EXPECT_EQ(c.id(), "cublas/sgemm");
  EXPECT_EQ(Candidate::parse_id("cublas/sgemm").backend, Backend::Blas);
  const nlohmann::json j = c;
  EXPECT_EQ(j["backend"], "cublas");
  EXPECT_FALSE(j.contains("algo"));
  EXPECT_EQ(j.get<Candidate>().backend, Backend::Blas);
  EXPECT_EQ(parse_backend("cublas"), Backend::Blas);
}

TEST(CandidateId, RejectsMalformedIds) {
  for (const char* bad : {"", "own/", "cublas/a1", "lt/a1-t2", "lt/a1-t2-s3-k4-r5-w6-c7-cl8-i9x", "lt/ax-t2-s3-k4-r5-w6-c7-cl8-i9"})
    EXPECT_THROW(Candidate::parse_id(bad), InputError) << bad;
}

TEST(CandidateJson, CarriesTheAlgoFieldsAndTheHeuristicRank) {
  const nlohmann::json j = lt_candidate();
  EXPECT_EQ(j["algo"]["splitk"], 4);
  EXPECT_EQ(j["algo"]["cluster_shape"], 16);
  const Candidate back = j.get<Candidate>();
  EXPECT_EQ(back.lt, lt_candidate().lt);
  EXPECT_EQ(back.heuristic_rank, 2);
}

}  // namespace
}  // namespace gemmtune
