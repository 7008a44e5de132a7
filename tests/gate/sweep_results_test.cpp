// The gate's reader of `sweep --json` is strict: a sweep file with a value gemmtune cannot have written is refused
// with exit 2 naming the file and the field, and the gate compares nothing.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/run_gemmtune.hpp"
#include "support/scratch_dir.hpp"
#include "support/sweep_fixture.hpp"

namespace gemmtune {
namespace {

TEST(SweepResultsCli, GateRefusesARecordWithImpossibleStatisticsWithExitTwo) {
  test::ScratchDir scratch;
  const nlohmann::json baseline = test::sweep_document(6);
  test::write_bytes(scratch.path("baseline.json"), baseline.dump());
  const struct {
    const char* field;
    nlohmann::json value;
  } bad[] = {{"max_us", 0.0}, {"mean_us", -1e308}, {"stddev_us", 1.8e19}, {"sm_clock_mhz", 0.5},
             {"tolerance", 9.2e18}, {"timer", ""}, {"status", "fine"}, {"problem_key", "fwd:1x1x1:nn:row:none:tf32"}};
  for (const auto& b : bad) {
    nlohmann::json current = baseline;
    current["results"][4][b.field] = b.value;
    test::write_bytes(scratch.path("current.json"), current.dump());
    const auto r = test::run_gemmtune(
        {"gate", "--baseline", scratch.path("baseline.json"), "--current", scratch.path("current.json")});
    EXPECT_EQ(r.exit_code, 2) << b.field << ": " << r.output;
    EXPECT_NE(r.output.find(scratch.path("current.json") + ": results[4]." + b.field + ":"), std::string::npos)
        << r.output;
  }
}

// Found by fuzz_sweep_results (tests/fuzz/regressions/fuzz_sweep_results/number_beyond_double_range): 1e999 made the
// JSON parser throw out_of_range, which the gate reported with exit 1 as if a check had failed.
TEST(SweepResultsCli, GateRefusesANumberBeyondADoublesRangeWithExitTwo) {
  test::ScratchDir scratch;
  const std::string baseline = test::sweep_document(2).dump();
  test::write_bytes(scratch.path("baseline.json"), baseline);
  std::string current = baseline;
  current.insert(current.find("\"median_us\":") + 12, "1e999,\"x\":");
  test::write_bytes(scratch.path("current.json"), current);
  const auto r = test::run_gemmtune(
      {"gate", "--baseline", scratch.path("baseline.json"), "--current", scratch.path("current.json")});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("current.json: not valid JSON"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace gemmtune
