// The report of `gemmtune apply --report` (apply/apply_report.hpp): parts of several processes merge into one row per
// call and outcome, the busiest first, with the share of calls gemmtune ran.
#include "apply/apply_report.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "support/scratch_dir.hpp"

namespace gemmtune::apply {
namespace {

ReportRow row(const std::string& problem, std::uint64_t calls, std::uint64_t routed, const std::string& reason) {
  return ReportRow{"cublasSgemm_v2", problem, calls, routed, routed ? "own/x" : "", reason};
}

TEST(ApplyReport, PartsOfSeveralProcessesMergeIntoOneRowPerCallAndOutcome) {
  const test::ScratchDir scratch;
  const std::vector<ReportRow> first = {row("fwd:64x64x64:nn:row:none:fp32", 10, 10, ""),
                                        row("fwd:8x8x8:nn:row:none:fp32", 3, 0, "no usable exact entry")};
  const std::vector<ReportRow> second = {row("fwd:64x64x64:nn:row:none:fp32", 5, 5, "")};
  std::ofstream(scratch.path("1.apply.json")) << report_json(first).dump();
  std::ofstream(scratch.path("2.apply.json")) << report_json(second).dump();
  std::ofstream(scratch.path("other.json")) << "not a part";
  const std::vector<ReportRow> merged = read_report_parts(scratch.path());
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].problem, "fwd:64x64x64:nn:row:none:fp32");
  EXPECT_EQ(merged[0].calls, 15u);
  EXPECT_EQ(merged[0].routed_calls, 15u);
  EXPECT_EQ(merged[1].reason, "no usable exact entry");
  const nlohmann::json j = report_json(merged);
  EXPECT_EQ(j.at("calls"), 18);
  EXPECT_EQ(j.at("routed_calls"), 15);
  EXPECT_DOUBLE_EQ(j.at("routed_share").get<double>(), 15.0 / 18.0);
}

TEST(ApplyReport, ADamagedPartIsAnInputErrorNamingIt) {
  const test::ScratchDir scratch;
  std::ofstream(scratch.path("7.apply.json")) << R"({"rows": [{"api": "x"}]})";
  try {
    read_report_parts(scratch.path());
    FAIL() << "a damaged part was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("7.apply.json"), std::string::npos) << e.what();
  }
}

TEST(ApplyReport, ADamagedPartIsLeftOutAndNamedWhenTheCallerKeepsTheOthers) {
  const test::ScratchDir scratch;
  std::ofstream(scratch.path("7.apply.json")) << R"({"rows": [{"api": "x"}]})";
  std::ofstream(scratch.path("8.apply.json")) << report_json({row("fwd:64x64x64:nn:row:none:fp32", 4, 4, "")}).dump();
  std::vector<std::string> skipped;
  const std::vector<ReportRow> merged = read_report_parts(scratch.path(), &skipped);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].calls, 4u);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("7.apply.json"), std::string::npos) << skipped[0];
}

TEST(ApplyReport, NoCallsIsAShareOfZero) {
  EXPECT_EQ(report_json({}).at("routed_share"), 0.0);
}

}  // namespace
}  // namespace gemmtune::apply
