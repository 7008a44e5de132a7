#include "profiler/ncu_command.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "nvtx/case_range.hpp"
#include "profiler/ncu_import.hpp"
#include "profiler/shell_quote.hpp"

namespace gemmtune {
namespace {

const GemmProblem kProblem = GemmProblem::parse_key("fwd:1024x1024x1024:nn:row:bias+gelu:tf32");
const Candidate kCandidate = Candidate::parse_id("lt/a21-t18-s8-k1-r0-w0-c0-cl0-i0");

NcuCommandOptions quick_options() {
  NcuCommandOptions o;
  o.ncu = "/usr/local/cuda/bin/ncu";
  o.sections.name = "quick";
  o.sections.sections = {"SpeedOfLight", "MemoryWorkloadAnalysis", "Occupancy", "LaunchStats", "WarpStateStats"};
  o.export_path = "results/ncu/x.ncu-rep";
  return o;
}

const std::vector<std::string> kRun = {"/opt/gemmtune", "run", "--m", "1024", "--n", "1024", "--k", "1024"};

// The value after `flag`, or "" when the flag is absent.
std::string value_of(const std::vector<std::string>& argv, const std::string& flag) {
  const auto it = std::find(argv.begin(), argv.end(), flag);
  return it == argv.end() || it + 1 == argv.end() ? "" : *(it + 1);
}

TEST(NcuCommand, SelectsExactlyTheCaseRangeAndLeavesClocksAlone) {
  const auto argv = ncu_profile_argv(kProblem, kCandidate, quick_options(), kRun);
  EXPECT_EQ(argv.front(), "/usr/local/cuda/bin/ncu");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--nvtx"), argv.end());
  EXPECT_EQ(value_of(argv, "--nvtx-include"), ncu_nvtx_include(kProblem, kCandidate));
  EXPECT_EQ(value_of(argv, "--clock-control"), "none");
  EXPECT_EQ(value_of(argv, "--cache-control"), "none");
  EXPECT_EQ(value_of(argv, "--export"), "results/ncu/x.ncu-rep");
}

TEST(NcuCommand, LaunchCountCoversEveryKernelOfTheProfiledCalls) {
  NcuCommandOptions o = quick_options();
  o.profiled_calls = 4;
  const auto argv = ncu_profile_argv(kProblem, kCandidate, o, kRun);
  EXPECT_EQ(value_of(argv, "--launch-count"), std::to_string(4 * kMaxKernelsPerCall));
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "--launch-skip"), argv.end());  // the NVTX range excludes warm-up
}

TEST(NcuCommand, CollectsEveryMetricTheImportReads) {
  const auto argv = ncu_profile_argv(kProblem, kCandidate, quick_options(), kRun);
  const std::string metrics = "," + value_of(argv, "--metrics") + ",";
  for (const std::string& m : ncu_import_metrics()) EXPECT_NE(metrics.find("," + m + ","), std::string::npos) << m;
}

TEST(NcuCommand, SetSectionsAndExtraMetricsBecomeFlags) {
  NcuCommandOptions o = quick_options();
  o.sections.ncu_set = "full";
  o.sections.metrics = {"smsp__inst_executed.sum"};
  const auto argv = ncu_profile_argv(kProblem, kCandidate, o, kRun);
  EXPECT_EQ(value_of(argv, "--set"), "full");
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--section"), 5);
  EXPECT_NE(value_of(argv, "--metrics").find("smsp__inst_executed.sum"), std::string::npos);
}

TEST(NcuCommand, KernelRegexFiltersOnDemangledNames) {
  NcuCommandOptions o = quick_options();
  o.kernel_regex = "sm90_xmma.*";
  const auto argv = ncu_profile_argv(kProblem, kCandidate, o, kRun);
  EXPECT_EQ(value_of(argv, "--kernel-name"), "regex:sm90_xmma.*");
  EXPECT_EQ(value_of(argv, "--kernel-name-base"), "demangled");
}

TEST(NcuCommand, ProfiledRunComesLastWordForWord) {
  const auto argv = ncu_profile_argv(kProblem, kCandidate, quick_options(), kRun);
  ASSERT_GE(argv.size(), kRun.size());
  EXPECT_TRUE(std::equal(kRun.begin(), kRun.end(), argv.end() - static_cast<std::ptrdiff_t>(kRun.size())));
}

TEST(NcuCommand, PrintedLineQuotesTheRangeFilter) {
  const std::string line = shell_join(ncu_profile_argv(kProblem, kCandidate, quick_options(), kRun));
  EXPECT_NE(line.find("--nvtx-include 'gemmtune@fwd:1024x1024x1024:nn:row:bias+gelu:tf32|lt|a21-t18-s8-k1-r0-w0-c0-"
                      "cl0-i0/'"),
            std::string::npos)
      << line;
}

TEST(NcuCommand, RejectsNoProfiledCallOrNoReportPath) {
  NcuCommandOptions o = quick_options();
  o.profiled_calls = 0;
  EXPECT_THROW(ncu_profile_argv(kProblem, kCandidate, o, kRun), InputError);
  o = quick_options();
  o.export_path.clear();
  EXPECT_THROW(ncu_profile_argv(kProblem, kCandidate, o, kRun), InputError);
}

TEST(NcuCommand, ReportNameIsFileSafeAndCarriesItsCacheControl) {
  const std::string stem = ncu_report_stem(kProblem, kCandidate, NcuCacheControl::All);
  EXPECT_EQ(stem, "fwd_1024x1024x1024_nn_row_bias_gelu_tf32__lt_a21-t18-s8-k1-r0-w0-c0-cl0-i0__cc-all");
  EXPECT_EQ(shell_quote(stem), stem);
  EXPECT_EQ(cache_control_of_report("results/ncu/" + stem + ".ncu-rep"), "all");
  EXPECT_EQ(cache_control_of_report(
                "r/" + ncu_report_stem(kProblem, kCandidate, NcuCacheControl::None) + ".ncu-rep"),
            "none");
  EXPECT_EQ(cache_control_of_report("my_report.ncu-rep"), "unknown");
}

TEST(NcuCommand, CacheControlParsesOnlyNcusTwoValues) {
  EXPECT_EQ(parse_ncu_cache_control("none"), NcuCacheControl::None);
  EXPECT_EQ(parse_ncu_cache_control("all"), NcuCacheControl::All);
  EXPECT_THROW(parse_ncu_cache_control("flush"), InputError);
}

TEST(NcuCommand, ImportReadsTheRawPageInBaseUnits) {
  EXPECT_EQ(ncu_import_argv("ncu", "r.ncu-rep"),
            (std::vector<std::string>{"ncu", "--import", "r.ncu-rep", "--csv", "--page", "raw", "--print-units", "base"}));
}

}  // namespace
}  // namespace gemmtune
