// CuptiRangeProfiler against Nsight Compute on the same GEMM: DRAM bytes with cold caches on both sides (the
// profiler flushes L2 before each pass, ncu runs with --cache-control all) must agree within 10%.
#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "cuda/stream.hpp"
#include "cupti/range_profiler.hpp"
#include "nvtx/case_range.hpp"
#include "nvtx/nvtx_range.hpp"
#include "support/gpu_test.hpp"
#include "support/lt_test_gemm.hpp"
#include "support/ncu_self_profile.hpp"
#include "support/scratch_dir.hpp"

namespace gemmtune {
namespace {

GemmProblem fp32_4096() { return GemmProblem::parse_key("fwd:4096x4096x4096:nn:row:none:fp32"); }

// Not a test: the program ncu profiles for the comparison below, one warm-up call outside the case range and one call
// inside it. DISABLED_ keeps it out of every test run and pass count; ncu's run asks for it by name
// (profile_self_with_ncu).
TEST(DISABLED_NcuDramWorkload, OneFp32Gemm4096CallInsideItsCaseRange) {
  GT_REQUIRE_GPU();
  const GemmProblem p = fp32_4096();
  const test::LtTestGemm gemm(p, 4096);
  CudaStream stream;
  gemm.run(stream.get());
  {
    NvtxRange range(nvtx_case_range(p, gemm.candidate()));
    gemm.run(stream.get());
  }
  stream.synchronize();
}

TEST(CuptiRangeProfiler, Fp32Gemm4096DramBytesAgreeWithNcuWithinTenPercent) {
  GT_REQUIRE_GPU();
  if (test::ncu_executable().empty()) GT_SKIP_GPU_TEST() << "ncu is not installed";
  const GemmProblem p = fp32_4096();
  RangeMetrics mine;
  Candidate c;
  {
    const test::LtTestGemm gemm(p, 4096);
    c = gemm.candidate();
    CudaStream stream;
    CuptiRangeProfiler profiler(0);
    mine = profiler.measure([&] { gemm.run(stream.get()); }, L2State::Flushed);
  }  // the profiler and the GEMM's memory are gone before ncu starts
  test::ScratchDir dir;
  const NcuImport ncu = test::profile_self_with_ncu(p, c, "DISABLED_NcuDramWorkload.*", NcuCacheControl::All, 1,
                                                    dir.path("dram__cc-all.ncu-rep"));
  ASSERT_FALSE(ncu.kernels.empty());
  double ncu_bytes = 0, ncu_us = 0;
  for (const NcuKernelMetrics& k : ncu.kernels) {
    ncu_bytes += k.dram_bytes;
    ncu_us += k.duration_us;
  }
  std::printf("[ dram     ] range profiler %.4g B in %.1f us; ncu --cache-control all %.4g B in %.1f us (%zu kernels)\n",
              mine.dram_bytes(), mine.duration_us, ncu_bytes, ncu_us, ncu.kernels.size());
  EXPECT_NEAR(mine.dram_bytes() / ncu_bytes, 1.0, 0.10);
}

}  // namespace
}  // namespace gemmtune
