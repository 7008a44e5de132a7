// Every wgmma tf32 variant (kernels/wgmma_tf32_gemm.cu, sm_90a) vs the fp64 reference on the layouts it runs (nn, nt):
// every activation, save_z, dropout, both output layouts, and shapes with 1, 7, 127, 255, 1000 and 4095 in every
// dimension; and the layouts it refuses, with their reason.
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

}  // namespace
}  // namespace gemmtune::kernels
