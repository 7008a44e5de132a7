#include "nvtx/case_range.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace gemmtune {
namespace {

GemmProblem tf32_bias_gelu_1024() {
  return GemmProblem::parse_key("fwd:1024x1024x1024:nn:row:bias+gelu:tf32");
}

TEST(NvtxCaseRange, NameIsProblemKeyThenCandidateIdWithItsSlashAsPipe) {
  const Candidate lt = Candidate::parse_id("lt/a21-t18-s8-k1-r0-w0-c0-cl0-i0");
  EXPECT_EQ(nvtx_case_range(tf32_bias_gelu_1024(), lt),
            "fwd:1024x1024x1024:nn:row:bias+gelu:tf32|lt|a21-t18-s8-k1-r0-w0-c0-cl0-i0");
  const Candidate own = Candidate::parse_id("own/tf32_128x128x32_w64x64_s3");
  EXPECT_EQ(nvtx_case_range(tf32_bias_gelu_1024(), own),
            "fwd:1024x1024x1024:nn:row:bias+gelu:tf32|own|tf32_128x128x32_w64x64_s3");
}

TEST(NvtxCaseRange, NameHoldsNoCharacterNcuParsesAsRangeSyntax) {
  const GemmProblem p = GemmProblem::parse_key("bwd_a:77x5x3:tn:col:bias+leaky_relu=-0.25+z+dropout=0.1:3xtf32");
  const std::string name = nvtx_case_range(p, Candidate::parse_id("lt/a0-t1-s2-k4-r1-w1-c0-cl0-i0+epi"));
  EXPECT_EQ(name.find_first_of("/@"), std::string::npos) << name;
  EXPECT_NE(name.front(), '[');
  EXPECT_NE(name.back(), ']');
}

TEST(NvtxCaseRange, ParseRecoversProblemKeyAndCandidateId) {
  const GemmProblem p = GemmProblem::parse_key("bwd_b:256x4096x4096:nt:row:relu+z:fp32");
  for (const char* id : {"lt/a21-t18-s8-k1-r0-w0-c0-cl0-i0", "lt/a6-t20-s0-k3-r2-w1-c0-cl0-i0+epi",
                         "own/fp32_simt_64x64x8"}) {
    const auto parts = parse_nvtx_case_range(nvtx_case_range(p, Candidate::parse_id(id)));
    ASSERT_TRUE(parts.has_value()) << id;
    EXPECT_EQ(parts->problem_key, p.key());
    EXPECT_EQ(parts->candidate_id, id);
  }
}

TEST(NvtxCaseRange, ParseRejectsNamesThatAreNotCaseRanges) {
  for (const char* name : {"", "warmup", "fwd:1x1x1:nn:row:none:tf32", "a|b", "|lt|a0", "key||a0", "key|lt|",
                           "key|lt|a0|extra", "key|lt|a/0", "gemmtune@key|lt|a0"})
    EXPECT_FALSE(parse_nvtx_case_range(name).has_value()) << name;
}

TEST(NvtxCaseRange, CandidatesThatDifferOnlyInEpilogueKernelGetDistinctFilters) {
  const Candidate fused = Candidate::parse_id("lt/a21-t18-s8-k1-r0-w0-c0-cl0-i0");
  const Candidate unfused = Candidate::parse_id("lt/a21-t18-s8-k1-r0-w0-c0-cl0-i0+epi");
  EXPECT_NE(ncu_nvtx_include(tf32_bias_gelu_1024(), fused), ncu_nvtx_include(tf32_bias_gelu_1024(), unfused));
}

TEST(NvtxCaseRange, NcuFilterIsDomainAtRangeWithPushPopSlash) {
  const Candidate lt = Candidate::parse_id("lt/a21-t18-s8-k1-r0-w0-c0-cl0-i0");
  EXPECT_EQ(ncu_nvtx_include(tf32_bias_gelu_1024(), lt),
            "gemmtune@fwd:1024x1024x1024:nn:row:bias+gelu:tf32|lt|a21-t18-s8-k1-r0-w0-c0-cl0-i0/");
}

TEST(NvtxCaseRange, VariantNameWithReservedCharacterIsRejected) {
  Candidate own;
  own.backend = Backend::Own;
  own.own_variant = "tf32|odd";
  EXPECT_THROW(nvtx_case_range(tf32_bias_gelu_1024(), own), InputError);
  own.own_variant = "tf32@odd";
  EXPECT_THROW(ncu_nvtx_include(tf32_bias_gelu_1024(), own), InputError);
}

}  // namespace
}  // namespace gemmtune
