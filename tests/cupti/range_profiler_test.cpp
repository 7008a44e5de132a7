// CuptiRangeProfiler against what a GEMM must move: the DRAM bytes of a 4096³ fp32 GEMM are bounded below by reading A
// and B and writing Y once (on the H100 its cuBLASLt kernel moves 397 MB, 1.97x that), a range spanning two calls
// counts both, and the profiler lives beside the sweep's CUPTI kernel timer.
#include "cupti/range_profiler.hpp"

#include <cstdio>

#include <gtest/gtest.h>

#include "cuda/stream.hpp"
#include "cupti/cupti_kernel_timer.hpp"
#include "support/gpu_test.hpp"
#include "support/lt_test_gemm.hpp"

namespace gemmtune {
namespace {

GemmProblem fp32_square(std::int64_t n) {
  return GemmProblem::parse_key("fwd:" + std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n) +
                                ":nn:row:none:fp32");
}

void print(const char* what, const RangeMetrics& m) {
  std::printf("[ metrics  ] %s: %.1f us, DRAM read %.4g B write %.4g B, SM %.1f%%, DRAM %.1f%%, %d passes\n", what,
              m.duration_us, m.dram_read_bytes, m.dram_write_bytes, m.sm_throughput_pct, m.dram_throughput_pct,
              m.passes);
}

TEST(CuptiRangeProfiler, Fp32Gemm4096DramBytesAreWithinTwiceTheAnalyticMinimum) {
  GT_REQUIRE_GPU();
  const GemmProblem p = fp32_square(4096);
  const test::LtTestGemm gemm(p, 4096);
  CudaStream stream;
  CuptiRangeProfiler profiler(0);
  const RangeMetrics m = profiler.measure([&] { gemm.run(stream.get()); });
  print("fp32 4096^3 lt heuristic-first, L2 flushed", m);

  const double minimum = 3.0 * 4096.0 * 4096.0 * sizeof(float);  // read A and B, write Y, once each
  // Up to one L2 of Y may still sit dirty in the cache when the range closes, hence the 0.75 floor.
  EXPECT_GE(m.dram_bytes(), 0.75 * minimum);
  EXPECT_LE(m.dram_bytes(), 2.0 * minimum);
  EXPECT_GT(m.duration_us, 0.0);
  EXPECT_GT(m.sm_throughput_pct, 0.0);
  EXPECT_LE(m.sm_throughput_pct, 100.0);
  EXPECT_GE(m.passes, 1);
}

TEST(CuptiRangeProfiler, RangeCountsEveryKernelOfTheCallable) {
  GT_REQUIRE_GPU();
  // 4096³: A and B (64 MiB each) do not fit in the 50 MB L2, so a second call in the range reads them again.
  const test::LtTestGemm gemm(fp32_square(4096), 4097);
  CudaStream stream;
  CuptiRangeProfiler profiler(0);
  const RangeMetrics once = profiler.measure([&] { gemm.run(stream.get()); });
  const RangeMetrics twice = profiler.measure([&] {
    gemm.run(stream.get());
    gemm.run(stream.get());
  });
  print("fp32 4096^3, one call", once);
  print("fp32 4096^3, two calls", twice);
  EXPECT_NEAR(twice.dram_read_bytes / once.dram_read_bytes, 2.0, 0.2);
  EXPECT_NEAR(twice.duration_us / once.duration_us, 2.0, 0.2);
}

// The sweep times with CUPTI activity records and would measure its best candidates with the range profiler in the
// same process: the profiler must work while the timer traces, and leave the timer's times as they were.
TEST(CuptiRangeProfiler, MeasuresWhileTheKernelTimerTracesAndLeavesItsTimesAlone) {
  GT_REQUIRE_GPU();
  const test::LtTestGemm gemm(fp32_square(2048), 2048);
  CudaStream stream;
  CuptiKernelTimer timer;
  const auto timed_call = [&] {
    timer.begin_call();
    gemm.run(stream.get());
    timer.end_call();
    stream.synchronize();
    const std::vector<double> t = timer.collect();
    return t.empty() ? -1.0 : t.front();
  };
  timed_call();  // first-call costs
  const double before = timed_call();
  RangeMetrics m;
  {
    CuptiRangeProfiler profiler(0);
    m = profiler.measure([&] { gemm.run(stream.get()); });
  }
  const double after = timed_call();
  std::printf("[ metrics  ] timer %.2f us before, %.2f us after; profiler %.4g B\n", before, after, m.dram_bytes());
  EXPECT_GT(m.dram_bytes(), 0.0);
  ASSERT_GT(before, 0.0);
  EXPECT_NEAR(after / before, 1.0, 0.05);
}

}  // namespace
}  // namespace gemmtune
