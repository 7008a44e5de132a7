#include "profiler/ncu_nvtx_stack.hpp"

#include <gtest/gtest.h>

namespace gemmtune {
namespace {

// A cell as ncu 2025.3 printed it on the H100 (fixtures/ncu_raw_workload_h100.csv).
const std::string kCell =
    "507  \"gemmtune:sweep:none:none:none:none:ASCII:sweep\"  "
    "\"gemmtune:fwd:1024x1024x1024:nn:row:none:tf32|lt|a43-t18-s34-k1-r0-w0-c0-cl5-i0:none:none:none:none:ASCII:"
    "fwd:1024x1024x1024:nn:row:none:tf32|lt|a43-t18-s34-k1-r0-w0-c0-cl5-i0\"  "
    "\"gemmtune:runtime call:none:none:none:none:ASCII:runtime call\" ";

TEST(NcuNvtxStack, EntriesComeOutermostFirstWithColonsInsideRangeNamesKept) {
  const auto stack = parse_ncu_nvtx_stack(kCell);
  ASSERT_EQ(stack.size(), 3u);
  EXPECT_EQ(stack[0].domain, "gemmtune");
  EXPECT_EQ(stack[0].range, "sweep");
  EXPECT_EQ(stack[1].range, "fwd:1024x1024x1024:nn:row:none:tf32|lt|a43-t18-s34-k1-r0-w0-c0-cl5-i0");
  EXPECT_EQ(stack[2].range, "runtime call");
}

TEST(NcuNvtxStack, KernelMapsToTheCaseRangeBelowTheRuntimesOwnRange) {
  const auto c = case_of_kernel(kCell);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->problem_key, "fwd:1024x1024x1024:nn:row:none:tf32");
  EXPECT_EQ(c->candidate_id, "lt/a43-t18-s34-k1-r0-w0-c0-cl5-i0");
}

TEST(NcuNvtxStack, KernelOutsideEveryCaseRangeHasNoCase) {
  EXPECT_FALSE(case_of_kernel("697  \"gemmtune:sweep:none:none:none:none:ASCII:sweep\" ").has_value());
  EXPECT_FALSE(case_of_kernel("").has_value());
}

TEST(NcuNvtxStack, CaseNamedInAnotherDomainIsNotGemmtunes) {
  EXPECT_FALSE(case_of_kernel("1  \"other:k:1x1x1|lt|a0:none:none:none:none:ASCII:k:1x1x1|lt|a0\" ").has_value());
}

TEST(NcuNvtxStack, EntryWhoseMessageDiffersFromItsRangeIsLeftOut) {
  EXPECT_TRUE(parse_ncu_nvtx_stack("1  \"gemmtune:a:none:none:none:none:ASCII:b\" ").empty());
}

}  // namespace
}  // namespace gemmtune
