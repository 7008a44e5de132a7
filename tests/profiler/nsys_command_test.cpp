#include "profiler/nsys_command.hpp"

#include <algorithm>

#include <gtest/gtest.h>

namespace gemmtune {
namespace {

const std::vector<std::string> kRun = {"/opt/gemmtune", "run", "--m", "64", "--n", "64", "--k", "64"};

bool has(const std::vector<std::string>& argv, const std::string& word) {
  return std::find(argv.begin(), argv.end(), word) != argv.end();
}

TEST(NsysCommand, RecordsOnlyTheCudaProfilerRangeWithNvtxAndCublas) {
  const auto argv = nsys_profile_argv("nsys", "results/nsys/case", kRun);
  EXPECT_EQ(argv[0], "nsys");
  EXPECT_EQ(argv[1], "profile");
  EXPECT_TRUE(has(argv, "--trace=cuda,nvtx,cublas"));
  EXPECT_TRUE(has(argv, "--capture-range=cudaProfilerApi"));
  EXPECT_TRUE(has(argv, "--capture-range-end=stop"));
  EXPECT_TRUE(has(argv, "--export=sqlite"));
  EXPECT_TRUE(has(argv, "--output=results/nsys/case"));
  EXPECT_TRUE(std::equal(kRun.begin(), kRun.end(), argv.end() - static_cast<std::ptrdiff_t>(kRun.size())));
}

TEST(NsysCommand, StatsReadTheReportProfileWrites) {
  const auto argv = nsys_stats_argv("/opt/nsys", "results/nsys/case");
  EXPECT_EQ(argv.front(), "/opt/nsys");
  EXPECT_TRUE(has(argv, "cuda_gpu_kern_sum"));
  EXPECT_EQ(argv.back(), "results/nsys/case.nsys-rep");
}

}  // namespace
}  // namespace gemmtune
