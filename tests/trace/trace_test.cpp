#include "trace/trace.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "support/scratch_dir.hpp"
#include "trace/trace_fixture.hpp"

namespace gemmtune {
namespace {

std::string error_of(const nlohmann::json& j) {
  try {
    trace_from_json(j, "t.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(TraceFile, ATraceSurvivesTheFileRoundTrip) {
  const test::ScratchDir dir;
  const Trace t = test::mlp_step_trace();
  write_trace_file(t, dir.path("t.json"));
  const Trace back = read_trace_file(dir.path("t.json"));
  EXPECT_EQ(back.command, t.command);
  EXPECT_DOUBLE_EQ(back.wall_ms, t.wall_ms);
  EXPECT_TRUE(back.gemms);
  ASSERT_EQ(back.kernels.size(), t.kernels.size());
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    EXPECT_EQ(back.kernels[i].name, t.kernels[i].name);
    EXPECT_EQ(back.kernels[i].start, t.kernels[i].start);
    EXPECT_EQ(back.kernels[i].end, t.kernels[i].end);
    EXPECT_EQ(back.kernels[i].launch_tid, t.kernels[i].launch_tid);
    EXPECT_EQ(back.kernels[i].gemm, t.kernels[i].gemm);
    EXPECT_EQ(back.kernels[i].grid[1], t.kernels[i].grid[1]);
  }
  ASSERT_EQ(back.ranges.size(), t.ranges.size());
  EXPECT_EQ(back.ranges[1].depth, t.ranges[1].depth);
  ASSERT_EQ(back.gemms_called.size(), 3u);
  EXPECT_TRUE(back.gemms_called[0].call == t.gemms_called[0].call);
  EXPECT_EQ(back.copies.size(), 2u);
  // Each kernel name is stored once.
  const nlohmann::json j = trace_to_json(t);
  EXPECT_EQ(j.at("kernel_names").size(), 6u);
  EXPECT_EQ(j.at("schema"), "gemmtune.trace");
  EXPECT_EQ(j.at("schema_version"), 2);
}

TEST(TraceFile, CublasCallsAndTheGemmCoverageSurviveTheRoundTrip) {
  Trace t = test::torch_step_trace();
  t.gemm_coverage = 0.9;
  const Trace back = trace_from_json(trace_to_json(t), "t.json");
  ASSERT_EQ(back.gemms_called.size(), t.gemms_called.size());
  for (std::size_t i = 0; i < t.gemms_called.size(); ++i) {
    EXPECT_TRUE(back.gemms_called[i].call == t.gemms_called[i].call) << i;
    EXPECT_EQ(back.gemms_called[i].calls, t.gemms_called[i].calls);
  }
  EXPECT_EQ(back.gemm_coverage, 0.9);
  t.gemm_coverage.reset();
  EXPECT_FALSE(trace_from_json(trace_to_json(t), "t.json").gemm_coverage.has_value());
}

TEST(TraceFile, AVersionOneTraceIsStillRead) {
  // Version 1: cublasLtMatmul calls only, under "desc", and no gemm_coverage.
  nlohmann::json j = trace_to_json(test::mlp_step_trace());
  j["schema_version"] = 1;
  j.erase("gemm_coverage");
  const Trace t = trace_from_json(j, "old.json");
  ASSERT_EQ(t.gemms_called.size(), 3u);
  EXPECT_EQ(t.gemms_called[0].api(), "cublasLtMatmul");
  EXPECT_FALSE(t.gemm_coverage.has_value());
}

TEST(TraceFile, SchemaErrorsNameTheFileAndField) {
  const nlohmann::json good = trace_to_json(test::mlp_step_trace());
  EXPECT_EQ(error_of(good), "accepted");

  nlohmann::json j = good;
  j["schema"] = "gemmtune.sweep";
  EXPECT_NE(error_of(j).find("not a gemmtune trace"), std::string::npos);
  j = good;
  j["schema_version"] = 3;
  EXPECT_NE(error_of(j).find("schema_version 3"), std::string::npos);
  j = good;
  j.erase("kernels");
  EXPECT_NE(error_of(j).find("t.json: kernels: missing"), std::string::npos) << error_of(j);
  j = good;
  j["kernels"][0]["name"] = 99;
  EXPECT_NE(error_of(j).find("kernels[0].name: no kernel name 99"), std::string::npos) << error_of(j);
  j = good;
  j["kernels"][2]["end"] = 1;
  EXPECT_NE(error_of(j).find("kernels[2].end: before start"), std::string::npos) << error_of(j);
  j = good;
  j["kernels"][0]["grid"] = {1, 2};
  EXPECT_NE(error_of(j).find("kernels[0].grid"), std::string::npos) << error_of(j);
  j = good;
  j["kernels"][0]["gemm"] = 7;
  EXPECT_NE(error_of(j).find("kernels[0].gemm: no gemm call 7"), std::string::npos) << error_of(j);
  j = good;
  j["copies"][0]["kind"] = "memmove";
  EXPECT_NE(error_of(j).find("copies[0].kind"), std::string::npos) << error_of(j);
  j = good;
  j["gemm_calls"][0]["desc"]["d"]["rows"] = -4;
  EXPECT_NE(error_of(j).find("gemm_calls[0].desc"), std::string::npos) << error_of(j);
  j = trace_to_json(test::torch_step_trace());
  j["gemm_calls"][1]["blas"]["m"] = "tall";
  EXPECT_NE(error_of(j).find("gemm_calls[1].blas"), std::string::npos) << error_of(j);
  j = good;
  j["gemm_coverage"] = 1.5;
  EXPECT_NE(error_of(j).find("gemm_coverage: must be a fraction"), std::string::npos) << error_of(j);
  j = good;
  j.erase("gemm_coverage");
  EXPECT_NE(error_of(j).find("gemm_coverage: missing"), std::string::npos) << error_of(j);
  j = good;
  j["wall_ms"] = "fast";
  EXPECT_NE(error_of(j).find("wall_ms: expected a number"), std::string::npos) << error_of(j);
  EXPECT_NE(error_of(nlohmann::json::array()).find("expected an object"), std::string::npos);
}

}  // namespace
}  // namespace gemmtune
