// `gemmtune apply` on a GPU, the whole loop on a real cuBLAS program (tests/apply/gpu_caller): `trace --gemms --db`
// records its problem, `sweep --from-misses` tunes it, and under `apply` its calls run through the runtime (the report
// says every eager call was routed, with the db's candidate) and give the result cuBLAS gives. A problem first seen
// inside a graph capture stays with cuBLAS for that call, and the captured graph still computes the product.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/process.hpp"
#include "support/gpu_test.hpp"
#include "support/run_gemmtune.hpp"
#include "support/scratch_dir.hpp"

namespace gemmtune {
namespace {

std::vector<float> read_floats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<float> v;
  float x = 0;
  while (in.read(reinterpret_cast<char*>(&x), sizeof(x))) v.push_back(x);
  return v;
}

// The largest |a - b| over the largest |b|: how far apart two results of the same product are.
double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

struct Case {
  const char* name;
  std::vector<std::string> args;  // m n k transa transb tf32
  double tolerance;               // against cuBLAS's own result
};

class ApplyGpu : public ::testing::TestWithParam<Case> {};

TEST_P(ApplyGpu, TracedSweptAndAppliedACublasProgramsGemmRunsThroughTheRuntimeWithCublassResult) {
  GT_REQUIRE_GPU();
  const Case& c = GetParam();
  const test::ScratchDir dir;
  const std::string db = dir.path("step.db"), report = dir.path("report.json");
  const auto caller = [&](const std::string& out, const std::string& calls, bool capture) {
    std::vector<std::string> argv = {GEMMTUNE_APPLY_GPU_CALLER, out};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    argv.push_back(calls);
    argv.push_back(capture ? "1" : "0");
    return argv;
  };

  const ProcessOutput plain = capture_process(caller(dir.path("plain.bin"), "3", true));
  ASSERT_EQ(plain.status, 0) << plain.err;
  std::vector<std::string> trace = {"trace", "--gemms", "--db", db, "--no-tables", "--"};
  for (const std::string& a : caller(dir.path("traced.bin"), "1", false)) trace.push_back(a);
  const auto traced = test::run_gemmtune(trace);
  ASSERT_EQ(traced.exit_code, 0) << traced.output;
  const auto swept = test::run_gemmtune({"sweep", "--from-misses", "--db", db});
  ASSERT_EQ(swept.exit_code, 0) << swept.output;

  std::vector<std::string> apply = {"apply", "--db", db, "--report", report, "--"};
  for (const std::string& a : caller(dir.path("applied.bin"), "3", true)) apply.push_back(a);
  const auto applied = test::run_gemmtune(apply);
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(report));
  ASSERT_EQ(j.at("rows").size(), 2u) << j.dump(2);  // the captured call and the routed ones
  EXPECT_EQ(j.at("calls"), 4) << j.dump(2);
  // The three calls outside the capture run the db's entry, unless the sweep found cuBLAS's own choice fastest
  // (cublas/sgemm, as it did for tf32_nt on the H200): then they stay with cuBLAS, which already makes that call.
  int captured_rows = 0, entry_rows = 0;
  for (const nlohmann::json& row : j.at("rows")) {
    const std::string reason = row.at("reason").get<std::string>();
    if (row.at("calls") == 1) {
      ++captured_rows;
      EXPECT_EQ(row.at("routed_calls"), 0) << row.dump();
      EXPECT_NE(reason.find("capture"), std::string::npos) << row.dump();
      continue;
    }
    ++entry_rows;
    EXPECT_EQ(row.at("calls"), 3) << row.dump();
    if (row.at("routed_calls") == 3)
      EXPECT_FALSE(row.at("candidate").get<std::string>().empty()) << row.dump();
    else
      EXPECT_NE(reason.find("cuBLAS's own choice (cublas/sgemm)"), std::string::npos) << row.dump();
  }
  EXPECT_EQ(captured_rows, 1) << j.dump(2);
  EXPECT_EQ(entry_rows, 1) << j.dump(2);
  const std::vector<float> expected = read_floats(dir.path("plain.bin"));
  const std::vector<float> got = read_floats(dir.path("applied.bin"));
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_LE(relative_difference(got, expected), c.tolerance) << c.name;
}

// With --memory-budget below the 64 MiB workspace a stream's first routed call needs, no call may take gemmtune's
// path: each goes to cuBLAS (nothing of ours enqueued), the report says the budget is why, the result is cuBLAS's.
TEST(ApplyGpuBudget, ABudgetTooSmallForAStreamsWorkspaceLeavesEveryCallWithCublasAndSaysWhy) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  const std::string db = dir.path("step.db"), report = dir.path("report.json");
  const auto caller = [&](const std::string& out, const std::string& calls) {
    return std::vector<std::string>{GEMMTUNE_APPLY_GPU_CALLER, out, "384", "256", "512", "0", "0", "0", calls, "0"};
  };
  const ProcessOutput plain = capture_process(caller(dir.path("plain.bin"), "3"));
  ASSERT_EQ(plain.status, 0) << plain.err;
  std::vector<std::string> trace = {"trace", "--gemms", "--db", db, "--no-tables", "--"};
  for (const std::string& a : caller(dir.path("traced.bin"), "1")) trace.push_back(a);
  ASSERT_EQ(test::run_gemmtune(trace).exit_code, 0);
  ASSERT_EQ(test::run_gemmtune({"sweep", "--from-misses", "--db", db}).exit_code, 0);

  std::vector<std::string> apply = {"apply", "--db", db, "--memory-budget", "16", "--report", report, "--"};
  for (const std::string& a : caller(dir.path("applied.bin"), "3")) apply.push_back(a);
  const auto applied = test::run_gemmtune(apply);
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(report));
  EXPECT_EQ(j.at("calls"), 3) << j.dump(2);
  EXPECT_EQ(j.at("routed_calls"), 0) << j.dump(2);
  bool budget_named = false;
  for (const nlohmann::json& row : j.at("rows"))
    budget_named = budget_named || row.at("reason").get<std::string>().find("memory budget") != std::string::npos ||
                   row.at("reason").get<std::string>().find("cublas/sgemm") != std::string::npos;
  EXPECT_TRUE(budget_named) << j.dump(2);
  const std::vector<float> expected = read_floats(dir.path("plain.bin"));
  const std::vector<float> got = read_floats(dir.path("applied.bin"));
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_LE(relative_difference(got, expected), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, ApplyGpu,
    ::testing::Values(Case{"fp32_nn", {"384", "256", "512", "0", "0", "0"}, 1e-5},
                      Case{"fp32_tn_odd", {"333", "257", "129", "1", "0", "0"}, 1e-5},
                      Case{"tf32_nt", {"512", "384", "256", "0", "1", "1"}, 5e-3}),
    [](const ::testing::TestParamInfo<Case>& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace gemmtune
