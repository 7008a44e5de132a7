// Every wgmma tf32 variant (kernels/wgmma_tf32_gemm.cu, sm_90a) vs the fp64 reference on the layouts it runs (nn, nt):
// every activation, save_z, dropout, both output layouts, and shapes with 1, 7, 127, 255, 1000 and 4095 in every
// dimension; both of its pipelines (TMA when lda and ldb are multiples of 4, cp.async otherwise) on edge tiles; and the
// layouts it refuses, with their reason.
#include <gtest/gtest.h>

#include "kernels/kernel_test_support.hpp"
#include "kernels/registry.hpp"
#include "support/gpu_test.hpp"

namespace gemmtune::kernels {
namespace {

std::vector<const KernelVariant*> wgmma_variants() {
  std::vector<const KernelVariant*> variants;
  for (const KernelVariant& v : kernel_registry())
    if (v.family == Family::WgmmaTf32) variants.push_back(&v);
  return variants;
}

TEST(WgmmaTf32Gemm, IsRegisteredExactlyWhenBuiltWithSm90aCode) {
#if defined(GEMMTUNE_HAVE_WGMMA)
  EXPECT_GE(wgmma_variants().size(), 8u);
#else
  EXPECT_TRUE(wgmma_variants().empty());
#endif
}

TEST(WgmmaTf32Gemm, RefusesTransposedAOnAnyMachine) {
  for (const KernelVariant* v : wgmma_variants()) {
    for (const bool trans_b : {false, true}) {
      GemmProblem p;
      p.m = p.n = p.k = 256;
      p.trans_a = true;
      p.trans_b = trans_b;
      EXPECT_NE(v->unsupported_reason(p).find("K-major"), std::string::npos) << v->name << " " << p.key();
    }
  }
}

// The coverage problems with A stored m×k: TN becomes NN and TT becomes NT, so each of the two layouts still meets
// every activation and shape.
std::vector<GemmProblem> nn_nt_coverage_problems() {
  std::vector<GemmProblem> problems = test::coverage_problems(MathMode::Tf32);
  for (GemmProblem& p : problems) p.trans_a = false;
  return problems;
}

TEST(WgmmaTf32Gemm, EveryVariantMatchesFp64ReferenceOnEdgeShapesBothLayoutsAndEpilogues) {
  GT_REQUIRE_GPU();
  const std::vector<const KernelVariant*> variants = wgmma_variants();
  if (variants.empty()) GTEST_SKIP() << "this build has no sm_90a code, so no wgmma variants";
  if (const std::string why = variants.front()->device_unsupported_reason(); !why.empty()) GTEST_SKIP() << why;
  test::check_family_against_reference(Family::WgmmaTf32, nn_nt_coverage_problems());
}

// The launcher picks the TMA pipeline when both leading dimensions are multiples of 4 floats (with cudaMalloc'd
// operands), else the cp.async one. Edge tiles in every dimension for each: the TMA shapes keep lda and ldb aligned
// (k = 4 is a single partial k tile); the cp.async ones have an odd k, so lda is not.
TEST(WgmmaTf32Gemm, BothPipelinesMatchFp64ReferenceOnEdgeTiles) {
  GT_REQUIRE_GPU();
  const std::vector<const KernelVariant*> variants = wgmma_variants();
  if (variants.empty()) GTEST_SKIP() << "this build has no sm_90a code, so no wgmma variants";
  if (const std::string why = variants.front()->device_unsupported_reason(); !why.empty()) GTEST_SKIP() << why;
  struct Shape {
    std::int64_t m, n, k;
  };
  const Shape tma_shapes[] = {{5, 132, 4}, {300, 68, 1028}, {77, 260, 36}};
  const Shape cp_async_shapes[] = {{300, 68, 1029}, {77, 261, 37}};
  std::vector<GemmProblem> problems;
  for (const bool trans_b : {false, true}) {
    const auto add = [&](const Shape& s, bool epilogue) {
      GemmProblem p;
      p.m = s.m;
      p.n = s.n;
      p.k = s.k;
      p.trans_b = trans_b;
      p.epi.bias = epilogue;
      p.epi.act = epilogue ? Activation::Relu : Activation::None;
      p.mode = MathMode::Tf32;
      problems.push_back(p);
    };
    for (const Shape& s : tma_shapes) add(s, true);
    for (const Shape& s : cp_async_shapes) add(s, false);
  }
  test::check_family_against_reference(Family::WgmmaTf32, problems);
}

// Two-warpgroup tiles run persistent, with bulk tensor stores of Y and Z, where a problem has more tiles than resident
// blocks (2304² is 162 tiles of 256×128 and 324 of 128×128 for 132 SMs) and a row-major, aligned, n % 4 == 0 output
// without dropout: the coverage shapes are too small to get there. save_z on each, and edge tiles in m, n and k. The
// clustered variants' pairs of tiles along n: 2308 columns end in a pair whose second tile lies wholly past n.
TEST(WgmmaTf32Gemm, PersistentPathMatchesFp64ReferenceWithSaveZAndEdgeTiles) {
  GT_REQUIRE_GPU();
  const std::vector<const KernelVariant*> variants = wgmma_variants();
  if (variants.empty()) GTEST_SKIP() << "this build has no sm_90a code, so no wgmma variants";
  if (const std::string why = variants.front()->device_unsupported_reason(); !why.empty()) GTEST_SKIP() << why;
  std::vector<GemmProblem> problems;
  for (const bool trans_b : {false, true}) {
    GemmProblem p;
    p.m = p.n = 2304;
    p.k = 264;
    p.trans_b = trans_b;
    p.epi.bias = true;
    p.epi.act = Activation::Gelu;
    p.epi.save_z = true;
    p.mode = MathMode::Tf32;
    problems.push_back(p);
    p.m = 2310;
    p.n = 2308;
    p.k = 100;
    p.epi.bias = false;
    p.epi.act = Activation::Sigmoid;
    problems.push_back(p);
  }
  test::check_family_against_reference(Family::WgmmaTf32, problems);
}

}  // namespace
}  // namespace gemmtune::kernels
