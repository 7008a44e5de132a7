// The --gemms shim (libgemmtune_trace_gemms.so) in front of a cuBLASLt program, on a CPU: a fake cuBLASLt stands in
// for the real one (tests/trace/fake_cublaslt). What the shim writes must map to the problem the program ran, every
// call must still reach cuBLASLt, and outside `gemmtune trace` it must write nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "profiler/process.hpp"
#include "support/scratch_dir.hpp"
#include "trace/lt_call.hpp"
#include "trace/raw_format.hpp"

namespace gemmtune {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> gemm_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().string().find(trace_raw::kGemmsSuffix) != std::string::npos) out.push_back(e.path());
  return out;
}

TEST(LtShim, RecordsEachDistinctCallWithItsCountAndPassesEveryCallThrough) {
  const test::ScratchDir scratch;
  const fs::path dir = fs::path(scratch.path("records"));
  fs::create_directories(dir);
  const ProcessOutput r = capture_process(
      {"env", std::string("LD_PRELOAD=") + GEMMTUNE_TRACE_GEMM_SHIM, std::string(trace_raw::kDirEnv) + "=" + dir.string(),
       GEMMTUNE_FAKE_LT_CALLER});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("fake cuBLASLt saw 4 calls"), std::string::npos) << r.out;
  const std::vector<fs::path> files = gemm_files(dir);
  ASSERT_EQ(files.size(), 1u);
  std::ifstream in(files[0]);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].at("sig"), 1);
  EXPECT_EQ(lines[0].at("calls"), 2);
  const GemmCallProblem linear = lt_call_problem(lines[0].at("desc").get<LtCallDesc>());
  ASSERT_TRUE(linear.tunable) << linear.reason << "\n" << lines[0].dump();
  EXPECT_EQ(linear.problem.key(), "fwd:64x256x128:nt:row:bias:tf32");
  EXPECT_EQ(lines[1].at("calls"), 1);
  const GemmCallProblem bf16 = lt_call_problem(lines[1].at("desc").get<LtCallDesc>());
  EXPECT_FALSE(bf16.tunable);
  EXPECT_NE(bf16.reason.find("bf16"), std::string::npos) << bf16.reason;
  // Its aux attributes were read: the epilogue keeps Z, at the leading dimension the program set.
  const GemmCallProblem gelu_aux = lt_call_problem(lines[2].at("desc").get<LtCallDesc>());
  ASSERT_TRUE(gelu_aux.tunable) << gelu_aux.reason << "\n" << lines[2].dump();
  EXPECT_TRUE(gelu_aux.problem.epi.save_z) << gelu_aux.problem.key();
  EXPECT_EQ(lines[2].at("desc").at("aux_ld"), 256) << lines[2].dump();
}

TEST(LtShim, OutsideGemmtuneTraceItOnlyPassesCallsThrough) {
  const test::ScratchDir scratch;
  const ProcessOutput r =
      capture_process({"env", std::string("LD_PRELOAD=") + GEMMTUNE_TRACE_GEMM_SHIM, GEMMTUNE_FAKE_LT_CALLER});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("fake cuBLASLt saw 4 calls"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gemmtune
