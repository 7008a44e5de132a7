// The accuracy benchmark: its JSON and table (no GPU), and on a GPU the property it exists to show, that every
// 3xtf32 variant is as accurate as cuBLASLt fp32 (within 2×) however long k is.
#include <cmath>
#include <limits>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "support/gpu_test.hpp"
#include "tuner/accuracy_benchmark.hpp"

namespace gemmtune {
namespace {

AccuracyResult two_point_result() {
  AccuracyResult r;
  r.device.gpu_name = "Test GPU";
  r.m = r.n = 512;
  r.seed = 42;
  r.records = {{MathMode::Fp32, "lt/a0-t0-s0-k1-r0-w0-c0-cl0-i0", 4096, InputDistribution::Uniform, 4e-7, 4e-7},
               {MathMode::Tf32x3, "own/3xtf32_a", 4096, InputDistribution::Uniform, 6e-7, 4e-7},
               {MathMode::Tf32x3, "own/3xtf32_b", 4096, InputDistribution::WideExponent, 2e-6, 5e-7},
               {MathMode::Tf32, "own/tf32_a", 4096, InputDistribution::Uniform,
                std::numeric_limits<double>::infinity(), 4e-7}};
  r.skipped = {{MathMode::Tf32, "own/wgmma_tf32_x", 256, "needs sm_90a"}};
  return r;
}

TEST(AccuracyBenchmark, WorstRatioIsTheRecordFarthestAboveCublasLtFp32InThatMode) {
  const AccuracyResult r = two_point_result();
  const AccuracyRecord* worst = worst_ratio_record(r, MathMode::Tf32x3);
  ASSERT_NE(worst, nullptr);
  EXPECT_EQ(worst->candidate, "own/3xtf32_b");
  EXPECT_DOUBLE_EQ(worst->ratio_to_lt_fp32(), 4.0);
  EXPECT_EQ(worst_ratio_record(r, MathMode::Fp32), nullptr) << "cuBLASLt's own rows are the yardstick, not ours";
}

TEST(AccuracyBenchmark, JsonKeepsEveryRecordFieldAndWritesANonFiniteErrorAsNull) {
  const AccuracyResult r = two_point_result();
  const nlohmann::json j = r;
  const nlohmann::json& tf32 = j.at("records").at(3);
  EXPECT_TRUE(tf32.at("rel_err").is_null());
  for (const char* field : {"mode", "candidate", "k", "dist", "rel_err", "lt_fp32_rel_err"})
    EXPECT_TRUE(j.at("records").at(1).contains(field)) << field;
  EXPECT_EQ(j.at("records").at(2).at("dist"), "wide");
  EXPECT_EQ(j.at("records").at(1).at("mode"), "3xtf32");

  const auto back = j.get<AccuracyResult>();
  ASSERT_EQ(back.records.size(), r.records.size());
  EXPECT_TRUE(std::isinf(back.records[3].rel_err));
  EXPECT_EQ(back.records[2].dist, InputDistribution::WideExponent);
  EXPECT_DOUBLE_EQ(back.records[1].lt_fp32_rel_err, 4e-7);
  ASSERT_EQ(back.skipped.size(), 1u);
  EXPECT_EQ(back.skipped[0].reason, "needs sm_90a");
}

TEST(AccuracyBenchmark, TableHasOneRowPerDistKAndModeAndNamesWhatWasSkipped) {
  std::ostringstream out;
  print_accuracy_table(two_point_result(), out);
  const std::string table = out.str();
  EXPECT_NE(table.find("uniform    4096 3xtf32"), std::string::npos) << table;
  EXPECT_NE(table.find("wide       4096 3xtf32"), std::string::npos) << table;
  EXPECT_NE(table.find("4.00"), std::string::npos) << table;  // the wide point's ratio
  EXPECT_NE(table.find("skipped tf32 own/wgmma_tf32_x at k=256: needs sm_90a"), std::string::npos) << table;
}

TEST(AccuracyBenchmark, AnUnalignedPointKeepsItsShapeAndAnOlderFileWithoutOneTakesTheResults) {
  AccuracyResult r = two_point_result();
  r.records.push_back({MathMode::Tf32, "lt/a1-t0-s0-k1-r0-w0-c0-cl0-i0+pad", 4099, InputDistribution::Uniform, 3e-4,
                       5e-7, 513, 513});
  nlohmann::json j = r;
  EXPECT_EQ(j.at("records").at(0).at("m"), 512);
  EXPECT_EQ(j.at("records").at(4).at("n"), 513);
  const auto back = j.get<AccuracyResult>();
  EXPECT_EQ(back.records[4].m, 513);
  for (nlohmann::json& rec : j.at("records")) {
    rec.erase("m");
    rec.erase("n");
  }
  EXPECT_EQ(j.get<AccuracyResult>().records[4].m, 512);
}

TEST(AccuracyBenchmark, CublasLtOnPaddedCopiesIsOneOfOursNotTheYardstick) {
  AccuracyResult r = two_point_result();
  r.records.push_back({MathMode::Tf32x3, "lt/a1-t0-s0-k1-r0-w0-c0-cl0-i0+pad", 4099, InputDistribution::Uniform, 5e-6,
                       5e-7, 513, 513});
  const AccuracyRecord* worst = worst_ratio_record(r, MathMode::Tf32x3);
  ASSERT_NE(worst, nullptr);
  EXPECT_EQ(worst->k, 4099);  // ratio 10, above the aligned points' 4
  std::ostringstream out;
  print_accuracy_table(r, out);
  EXPECT_NE(out.str().find("uniform    4099 3xtf32             -    1"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("513x513"), std::string::npos) << out.str();
}

TEST(AccuracyBenchmark, ScaleBiasesRoundTripThroughJsonAndShowInTheTableAndPositiveInputsAreADistribution) {
  AccuracyResult r = two_point_result();
  r.records[0].scale_bias = r.records[1].lt_fp32_scale_bias = 3e-9;
  r.records[1].scale_bias = -2.5e-7;
  r.records[1].dist = r.records[0].dist = parse_input_distribution("positive");
  const auto back = nlohmann::json(r).get<AccuracyResult>();
  EXPECT_DOUBLE_EQ(back.records[1].scale_bias, -2.5e-7);
  EXPECT_DOUBLE_EQ(back.records[1].lt_fp32_scale_bias, 3e-9);
  EXPECT_EQ(back.records[1].dist, InputDistribution::Positive);
  std::ostringstream out;
  print_accuracy_table(back, out);
  EXPECT_NE(out.str().find("positive   4096 3xtf32"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("+3.00e-09    -2.50e-07"), std::string::npos) << out.str();
  nlohmann::json older = r;
  older.at("records").at(1).erase("scale_bias");  // a file from before the bias was measured
  EXPECT_DOUBLE_EQ(older.get<AccuracyResult>().records[1].scale_bias, 0.0);
}

TEST(AccuracyBenchmark, UnknownDistributionIsABadInput) {
  EXPECT_THROW(parse_input_distribution("gauss"), InputError);
}

TEST(AccuracyBenchmark, EveryThreeTf32VariantIsWithinTwiceCublasLtFp32sErrorAndUnscaledUpToK16384) {
  GT_REQUIRE_GPU();
  // The grid point, m = n = 512. At m = n = 256 the H200 measured 2.5x at k = 16384 (8.1e-7 against 3.2e-7):
  // there cuBLASLt splits k 16 or more ways, a tree-like sum, while ours adds each k8 step in order. README says so.
  AccuracySettings s;
  s.m = 512;
  s.n = 512;
  s.ks = {1024, 16384};
  s.modes = {MathMode::Tf32x3};
  const AccuracyResult r = run_accuracy_benchmark(s, 0, true);
  int checked = 0;
  for (const AccuracyRecord& rec : r.records) {
    if (rec.mode != MathMode::Tf32x3) continue;
    ++checked;
    EXPECT_LE(rec.rel_err, 1e-6 * std::sqrt(static_cast<double>(rec.k))) << rec.candidate;
    EXPECT_LE(rec.ratio_to_lt_fp32(), 2.0) << rec.candidate << " k=" << rec.k << " " << to_string(rec.dist)
                                           << ": " << rec.rel_err << " vs cuBLASLt fp32 " << rec.lt_fp32_rel_err;
    // Not scaled down as the tensor core's truncation scales a sum (kernels/split3x_promotion.cuh): under half of what
    // one truncation per k8 step leaves (−4.3e-8), a sixth of the bias before the scale-back (1.2e-7). Over 7 fresh
    // draws on an H200 the variants' biases at the wide unaligned point were +3.6e-9 to +1.09e-8, cuBLASLt fp32's
    // within ±1.6e-9 (results/nvidia-h200/accuracy_scale_bias_draws.txt): a quarter (1e-8) failed one draw in seven.
    EXPECT_LE(std::fabs(rec.scale_bias), 2e-8) << rec.candidate << " k=" << rec.k << " " << to_string(rec.dist);
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace gemmtune
