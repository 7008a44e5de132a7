// `sweep --metrics` end to end: the counters of a 4096³ fp32 GEMM read through the sweep are the bytes it must move.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/json_fields.hpp"
#include "support/gpu_test.hpp"
#include "support/run_gemmtune.hpp"
#include "support/scratch_dir.hpp"

namespace gemmtune {
namespace {

TEST(SweepMetrics, Fp32Gemm4096DramBytesAreWithinTwiceTheMinimumAndPlacedOnTheRoofline) {
  GT_REQUIRE_GPU();
  test::ScratchDir dir;
  const std::string profile = dir.path("m.json"), out = dir.path("m_out.json");
  test::write_bytes(profile, R"({"name": "metrics-test", "shapes": [[4096, 4096, 4096]], "modes": ["fp32"],
    "backends": ["lt"], "lt": {"top_k": 1}, "timing": {"min_samples": 10, "max_time_ms": 100}})");
  const auto r = test::run_gemmtune({"sweep", "--profile", profile, "--no-db", "--metrics", "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("metrics of the best candidate"), std::string::npos) << r.output;

  const nlohmann::json doc = read_json_file(out);
  const nlohmann::json& m = doc.at("problems").at(0).at("metrics");
  const double minimum = 3.0 * 4096 * 4096 * 4;  // A and B read once, Y written once
  EXPECT_DOUBLE_EQ(m.at("min_dram_bytes").get<double>(), minimum);
  EXPECT_GE(m.at("dram_bytes").get<double>(), 0.9 * minimum) << "a GEMM cannot move fewer bytes than its operands";
  EXPECT_LE(m.at("dram_bytes").get<double>(), 2.0 * minimum);
  EXPECT_EQ(m.at("roofline").at("bound"), "compute") << "4096³ fp32 is ~680 FLOP per byte, far past the ridge";
  EXPECT_GT(m.at("roofline").at("pct_of_bound").get<double>(), 50.0);
}

}  // namespace
}  // namespace gemmtune
