// Every tf32 variant (kernels/mma_tf32_gemm.cu) vs the fp64 reference: all layouts, activations, save_z, dropout,
// both output layouts, and shapes with 1, 7, 127, 255, 1000 and 4095 in every dimension.
#include <gtest/gtest.h>

#include "kernels/kernel_test_support.hpp"
#include "kernels/registry.hpp"
#include "support/gpu_test.hpp"

namespace gemmtune::kernels {
namespace {

TEST(MmaTf32Gemm, EveryVariantMatchesFp64ReferenceOnEdgeShapesLayoutsAndEpilogues) {
  GT_REQUIRE_GPU();
  test::check_family_against_reference(Family::MmaTf32);
}

}  // namespace
}  // namespace gemmtune::kernels
