// The generated ncu filter against a real profile: ncu, run on the workload below, must profile the timed calls of
// exactly one case, none of the warm-up and none of a case whose range name extends it.
#include <cstdio>

#include <gtest/gtest.h>

#include "cuda/stream.hpp"
#include "profiler/ncu_command.hpp"
#include "nvtx/case_range.hpp"
#include "nvtx/nvtx_range.hpp"
#include "support/gpu_test.hpp"
#include "support/lt_test_gemm.hpp"
#include "support/ncu_self_profile.hpp"
#include "support/scratch_dir.hpp"

namespace gemmtune {
namespace {

constexpr int kWarmupCalls = 2;
constexpr int kFusedCalls = 3;
constexpr int kUnfusedCalls = 5;

GemmProblem workload_problem() { return GemmProblem::parse_key("fwd:1024x1024x1024:nn:row:none:tf32"); }

// Not a test: the program ncu profiles for NcuCaseFilter below. Two cases run the same kernel; the second's range name
// is the first's plus "+epi". The warm-up calls, an outer range around everything and an inner range per call are
// what a sweep and the runtime add around a case. DISABLED_ keeps it out of every test run and pass count; ncu's run
// asks for it by name (profile_self_with_ncu).
TEST(DISABLED_NcuCaseWorkload, TimedCallsRunInsideTheirCaseRangeAndWarmupOutside) {
  GT_REQUIRE_GPU();
  const GemmProblem p = workload_problem();
  const test::LtTestGemm gemm(p, 1024);
  Candidate fused = gemm.candidate();
  Candidate unfused = fused;
  unfused.lt_epilogue_kernel = true;
  CudaStream stream;
  std::printf("[ ranges   ] fused %s\n[ ranges   ] unfused %s\n", nvtx_case_range(p, fused).c_str(),
              nvtx_case_range(p, unfused).c_str());

  NvtxRange sweep("sweep");
  for (int i = 0; i < kWarmupCalls; ++i) gemm.run(stream.get());
  {
    NvtxRange range(nvtx_case_range(p, fused));
    for (int i = 0; i < kFusedCalls; ++i) {
      NvtxRange call("runtime call");
      gemm.run(stream.get());
    }
  }
  {
    NvtxRange range(nvtx_case_range(p, unfused));
    for (int i = 0; i < kUnfusedCalls; ++i) gemm.run(stream.get());
  }
  stream.synchronize();
}

// The profiled calls of one case: every kernel carries that case's range, and their number is the case's calls
// times the kernels one call launches, the same for both cases (so neither warm-up nor the other case leaked in).
TEST(NcuCaseFilter, GeneratedFilterProfilesExactlyTheTimedCallsOfOneCase) {
  GT_REQUIRE_GPU();
  if (test::ncu_executable().empty()) GT_SKIP_GPU_TEST() << "ncu is not installed";
  const GemmProblem p = workload_problem();
  Candidate fused, unfused;
  {
    const test::LtTestGemm gemm(p, 1024);  // the workload's candidate: the heuristic's first choice
    fused = unfused = gemm.candidate();
    unfused.lt_epilogue_kernel = true;
  }
  test::ScratchDir dir;
  const NcuImport a = test::profile_self_with_ncu(p, fused, "DISABLED_NcuCaseWorkload.*", NcuCacheControl::None,
                                                  kFusedCalls, dir.path("fused__cc-none.ncu-rep"));
  const NcuImport b = test::profile_self_with_ncu(p, unfused, "DISABLED_NcuCaseWorkload.*", NcuCacheControl::None,
                                                  kUnfusedCalls, dir.path("unfused__cc-none.ncu-rep"));
  ASSERT_FALSE(a.kernels.empty());
  ASSERT_FALSE(b.kernels.empty());
  EXPECT_EQ(a.kernels_outside_cases, 0);
  EXPECT_EQ(b.kernels_outside_cases, 0);
  for (const NcuKernelMetrics& k : a.kernels) EXPECT_EQ(k.candidate_id, fused.id());
  for (const NcuKernelMetrics& k : b.kernels) EXPECT_EQ(k.candidate_id, unfused.id());
  EXPECT_EQ(a.kernels.size() % kFusedCalls, 0u);
  EXPECT_EQ(a.kernels.size() / kFusedCalls, b.kernels.size() / kUnfusedCalls);
  EXPECT_EQ(b.kernels.size() % kUnfusedCalls, 0u);
  std::printf("[ ncu      ] %zu kernels for %d calls of %s, %zu for %d calls of %s\n", a.kernels.size(), kFusedCalls,
              fused.id().c_str(), b.kernels.size(), kUnfusedCalls, unfused.id().c_str());
}

}  // namespace
}  // namespace gemmtune
