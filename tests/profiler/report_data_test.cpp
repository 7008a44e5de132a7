#include "profiler/report_data.hpp"

#include <gtest/gtest.h>

#include "profiler/roofline.hpp"
#include "support/scratch_dir.hpp"
#include "support/tuning_fixtures.hpp"

namespace gemmtune {
namespace {

// One H100 run over one problem: the heuristic's first algo (algo 5: rank 0) at 40 µs, a later algo at 30 µs and an
// own kernel at 25 µs; then ncu kernels of the own kernel imported at 27, 26 and 28 µs.
class ReportDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TuningDb db(path_);
    const std::int64_t run = db.begin_run(test::test_run(device_));
    db.store_problem(run, problem_,
                     {test::lt_record(problem_, 5, 40.0), test::lt_record(problem_, 7, 30.0),
                      test::own_record(problem_, "tf32_128x128x32_w64x64_s3", 25.0),
                      test::lt_record(problem_, 10, 0, MeasureStatus::VerifyFailed)});
    db.finish_run(run);
    std::vector<NcuKernelMetrics> kernels;
    for (double us : {27.0, 26.0, 28.0}) {
      NcuKernelMetrics k;
      k.device_key = device_.key();
      k.problem_key = problem_.key();
      k.candidate_id = "own/tf32_128x128x32_w64x64_s3";
      k.kernel_name = "gemm_tf32";
      k.duration_us = us;
      k.dram_bytes = 20e6;
      k.top_stalls = R"([{"reason":"long_scoreboard","pct":61.5}])";
      k.cache_control = "all";
      k.imported_at = "2026-11-23T00:00:00Z";
      kernels.push_back(k);
    }
    db.insert_ncu_metrics(kernels);
  }

  nlohmann::json device() const {
    const nlohmann::json report = build_report_json(TuningDb(path_, TuningDb::Access::ReadOnly));
    EXPECT_EQ(report["devices"].size(), 1u);
    return report["devices"][0];
  }

  test::ScratchDir dir_;
  std::string path_ = dir_.path("t.db");
  DeviceIdentity device_ = test::test_device("NVIDIA H100 80GB HBM3");
  GemmProblem problem_ = test::test_problem(1024, 1024, 1024);
};

TEST_F(ReportDataTest, TunedSpeedupIsHeuristicFirstOverTheFastestVerifiedCandidate) {
  const nlohmann::json d = device();
  ASSERT_EQ(d["latest_run"]["speedups"].size(), 1u);
  const nlohmann::json& s = d["latest_run"]["speedups"][0];
  EXPECT_DOUBLE_EQ(s["heuristic_first_us"].get<double>(), 40.0);
  EXPECT_EQ(s["best_backend"], "own");
  EXPECT_DOUBLE_EQ(s["speedup"].get<double>(), 40.0 / 25.0);
  EXPECT_EQ(d["latest_run"]["measurements"].size(), 4u);  // the failed one is listed, not compared
}

TEST_F(ReportDataTest, NcuTimePerCallIsTheMedianOfItsCallsBesideTheSweepMedian) {
  const nlohmann::json d = device();
  ASSERT_EQ(d["ncu"].size(), 1u);
  const nlohmann::json& n = d["ncu"][0];
  EXPECT_DOUBLE_EQ(n["ncu_call_us"].get<double>(), 27.0);
  EXPECT_DOUBLE_EQ(n["sweep_median_us"].get<double>(), 25.0);
  EXPECT_DOUBLE_EQ(n["ncu_over_sweep"].get<double>(), 27.0 / 25.0);
  EXPECT_EQ(n["kernels"].size(), 3u);
  EXPECT_EQ(n["kernels"][0]["top_stalls"][0]["reason"], "long_scoreboard");
}

TEST_F(ReportDataTest, CachedCaseSitsOnTheRooflineWithNcusBytesWhereImported) {
  const nlohmann::json d = device();
  EXPECT_EQ(d["peaks"]["model"], "H100 SXM5");
  ASSERT_EQ(d["cache"].size(), 1u);
  const nlohmann::json& r = d["cache"][0]["roofline"];
  EXPECT_EQ(r["bytes_source"], "ncu dram__bytes.sum");
  EXPECT_DOUBLE_EQ(r["dram_bytes"].get<double>(), 20e6);
  EXPECT_DOUBLE_EQ(r["intensity"].get<double>(), problem_.flops() / 20e6);
  EXPECT_EQ(r["bound"], "memory");  // 107 FLOP per measured byte, below the H100's ridge of 148
}

TEST(ReportData, NcuBytesWithWarmCachesDoNotPlaceACaseOnTheRoofline) {
  test::ScratchDir dir;
  TuningDb db(dir.path("t.db"));
  const DeviceIdentity device = test::test_device("NVIDIA H100 80GB HBM3");
  const GemmProblem p = test::test_problem(1024, 1024, 1024);
  db.store_problem(db.begin_run(test::test_run(device)), p, {test::lt_record(p, 5, 14.0)});
  NcuKernelMetrics k;
  k.device_key = device.key();
  k.problem_key = p.key();
  k.candidate_id = test::lt_record(p, 5, 14.0).candidate.id();
  k.kernel_name = "gemm";
  k.duration_us = 15;
  k.dram_bytes = 12544;
  k.cache_control = "none";
  db.insert_ncu_metrics({k});
  const nlohmann::json r = build_report_json(db)["devices"][0]["cache"][0]["roofline"];
  EXPECT_EQ(r["bytes_source"], "analytic minimum");
  EXPECT_DOUBLE_EQ(r["dram_bytes"].get<double>(), min_dram_bytes(p));
}

TEST(ReportData, GpuWithoutKnownPeaksHasNoRoofline) {
  test::ScratchDir dir;
  TuningDb db(dir.path("t.db"));
  const GemmProblem p = test::test_problem(64, 64, 64);
  const std::int64_t run = db.begin_run(test::test_run(test::test_device()));
  db.store_problem(run, p, {test::lt_record(p, 5, 4.0)});
  const nlohmann::json report = build_report_json(db);
  ASSERT_EQ(report["devices"].size(), 1u);
  EXPECT_TRUE(report["devices"][0]["peaks"].is_null());
  EXPECT_TRUE(report["devices"][0]["cache"][0]["roofline"].is_null());
}

}  // namespace
}  // namespace gemmtune
