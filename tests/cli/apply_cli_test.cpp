// `gemmtune apply` as users run it: usage errors are one line and exit 2 before the command runs, the command's exit
// status (or 128 + its signal) is gemmtune's, the shim is preloaded ahead of an LD_PRELOAD already set, and with no
// GPU a cuBLAS program runs unchanged while --report says why no call went through gemmtune.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/run_gemmtune.hpp"
#include "support/scoped_env.hpp"
#include "support/scratch_dir.hpp"
#include "gemm_shim/blas_call_spec.hpp"

namespace gemmtune {
namespace {

using test::run_gemmtune;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::size_t lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// A file that stands for a db: apply only checks that it is there; nothing opens it unless a GEMM is routable.
std::string some_db(const test::ScratchDir& dir) {
  const std::string db = dir.path("tuned.db");
  std::ofstream(db) << "";
  return db;
}

TEST(ApplyCli, UsageErrorsAreOneLineAndExitTwoBeforeTheCommandRuns) {
  const test::ScratchDir dir;
  const std::string marker = dir.path("ran");
  const std::string db = some_db(dir);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"apply", "--db", db}, "apply needs a command"},
      {{"apply", "--db", dir.path("missing.db"), "--", "touch", marker}, "no tuning db at"},
      {{"apply", "--db", db, "--report", dir.path("no/such/dir/r.json"), "--", "touch", marker}, "--report"},
      {{"apply", "--db", db, "--no-such-option", "--", "touch", marker}, ""},
      {{"apply", "--db", db, "--memory-budget", "1.5G", "--", "touch", marker}, "--memory-budget"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = run_gemmtune(args);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_TRUE(contains(r.output, message)) << r.output;
    if (!message.empty()) {
      EXPECT_EQ(lines(r.output), 1u) << r.output;
    }
  }
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the command ran after a usage error";
}

TEST(ApplyCli, TheCommandsExitStatusIsGemmtunes) {
  const test::ScratchDir dir;
  const std::string db = some_db(dir);
  EXPECT_EQ(run_gemmtune({"apply", "--db", db, "--", "true"}).exit_code, 0);
  EXPECT_EQ(run_gemmtune({"apply", "--db", db, "--", "sh", "-c", "exit 7"}).exit_code, 7);
  EXPECT_EQ(run_gemmtune({"apply", "--db", db, "--", "sh", "-c", "kill -TERM $$"}).exit_code, 128 + 15);
}

TEST(ApplyCli, TheShimGoesAheadOfAPreloadAlreadySetAndApplyIsOnInTheCommand) {
  const test::ScratchDir dir;
  const std::string db = some_db(dir);
  test::ScopedEnv env;
  env.set("LD_PRELOAD", GEMMTUNE_TRACE_GEMM_SHIM);
  const std::string show =
      "echo \"$LD_PRELOAD|$GEMMTUNE_APPLY|$GEMMTUNE_APPLY_DB|$GEMMTUNE_APPLY_FP32_EQUIVALENT|"
      "$GEMMTUNE_APPLY_MEMORY_MIB\"";
  const auto r = run_gemmtune(
      {"apply", "--db", db, "--fp32-equivalent", "--memory-budget", "768", "--", "sh", "-c", show});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string shim = std::filesystem::path(GEMMTUNE_TRACE_GEMM_SHIM).filename().string();
  EXPECT_TRUE(contains(r.output, shim + ":" + GEMMTUNE_TRACE_GEMM_SHIM + "|1|" +
                                     std::filesystem::absolute(db).string() + "|1|768"))
      << r.output;
}

TEST(ApplyCli, WithNoGpuACublasProgramRunsUnchangedAndTheReportSaysWhy) {
  const test::ScratchDir dir;
  const std::string db = some_db(dir);
  const std::string report = dir.path("report.json");
  const auto r = test::run_gemmtune_with_no_gpu_visible(
      {"apply", "--db", db, "--report", report, "--", GEMMTUNE_FAKE_BLAS_CALLER,
       test::spec(test::call("cublasSgemm_v2", CUBLAS_OP_N, CUBLAS_OP_N, 128, 64, 256, 128, 256, 128))});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "fake cuBLAS got 1 calls, 0 of them changed")) << r.output;
  EXPECT_TRUE(contains(r.output, "0 of 1 GEMM calls ran through gemmtune")) << r.output;
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(report));
  ASSERT_EQ(j.at("rows").size(), 1u) << j.dump(2);
  EXPECT_EQ(j.at("routed_share"), 0.0);
  EXPECT_EQ(j.at("rows")[0].at("problem"), "fwd:64x128x256:nn:row:none:fp32");
  EXPECT_TRUE(contains(j.at("rows")[0].at("reason").get<std::string>(), "no runtime in this process")) << j.dump(2);
}

// A process of the command that leaves a damaged report part (killed while writing it, say) costs that part's rows and
// one warning; the other parts still make the report and the command's exit status is still gemmtune's.
TEST(ApplyCli, ADamagedReportPartIsLeftOutWithAWarningAndTheCommandsStatusKept) {
  const test::ScratchDir dir;
  const std::string db = some_db(dir);
  const std::string report = dir.path("report.json");
  const auto r = run_gemmtune({"apply", "--db", db, "--report", report, "--", "sh", "-c",
                               "echo '{\"rows\": [' > \"$GEMMTUNE_APPLY_REPORT_DIR/1.apply.json\"; exit 3"});
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(contains(r.output, "report part left out")) << r.output;
  EXPECT_TRUE(contains(r.output, "1.apply.json")) << r.output;
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(report));
  EXPECT_EQ(j.at("calls"), 0) << j.dump(2);
}

}  // namespace
}  // namespace gemmtune
