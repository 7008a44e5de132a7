// `gemmtune trace` as users run it: usage errors, a trace file's tables and diff, a bad trace file (exit 2), a
// command run under the injection library, and on a GPU the kernels of `gemmtune run` counted one by one.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lt/lt_gemm.hpp"
#include "lt/lt_handles.hpp"
#include "support/gpu_test.hpp"
#include "support/run_gemmtune.hpp"
#include "support/scratch_dir.hpp"
#include "trace/trace.hpp"
#include "trace/trace_fixture.hpp"
#include "trace/trace_tables.hpp"

namespace gemmtune {
namespace {

using test::run_gemmtune;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(TraceCli, UsageErrorsExitTwoBeforeAnythingRuns) {
  const test::ScratchDir dir;
  const std::string marker = dir.path("ran");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"trace"},
        {"trace", "--db", dir.path("x.db"), "--", "touch", marker},
        {"trace", "--table", "kernel", "--", "touch", marker},
        {"trace", "--format", "xml", "--", "touch", marker},
        {"trace", "--categories", dir.path("missing.json"), "--", "touch", marker}}) {
    const auto r = run_gemmtune(args);
    EXPECT_EQ(r.exit_code, 2) << args.size() << ": " << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the command ran after a usage error";
  const auto r = run_gemmtune({"trace", "--", dir.path("no-such-program")});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "cannot run")) << r.output;
}

TEST(TraceCli, ShowPrintsEveryTableInEveryFormat) {
  const test::ScratchDir dir;
  write_trace_file(test::mlp_step_trace(), dir.path("t.json"));
  auto r = run_gemmtune({"trace", "show", dir.path("t.json")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* title : {"Summary:", "CUDA GPU kernel summary (cuda_gpu_kern_sum):", "Kernel time by category:",
                            "NVTX range summary (nvtx_sum):", "GPU time by top-level NVTX range:",
                            "Kernels per top-level NVTX range:", "GEMM problems run through cuBLAS and cuBLASLt:"})
    EXPECT_TRUE(contains(r.output, title)) << title << "\n" << r.output;
  r = run_gemmtune({"trace", "show", dir.path("t.json"), "--format", "csv", "--table", "gemms"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "27.8,10.000,1,10.000,1,cublasLtMatmul,yes,fwd:64x256x128:nt:row:bias:tf32\n"))
      << r.output;
  for (const char* format : {"json", "md"}) {
    r = run_gemmtune({"trace", "show", dir.path("t.json"), "--format", format});
    EXPECT_EQ(r.exit_code, 0) << format << ": " << r.output;
  }
}

TEST(TraceCli, ABadTraceFileIsExitTwoWithTheReason) {
  const test::ScratchDir dir;
  test::write_bytes(dir.path("sweep.json"), "{\"schema\": \"gemmtune.sweep\", \"schema_version\": 1}");
  auto r = run_gemmtune({"trace", "show", dir.path("sweep.json")});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "not a gemmtune trace")) << r.output;
  test::write_bytes(dir.path("cut.json"), "{\"schema\": \"gemmtune.trace\"");
  r = run_gemmtune({"trace", "show", dir.path("cut.json")});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_gemmtune({"trace", "diff", dir.path("missing.json"), dir.path("cut.json")});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_gemmtune({"trace", "diff", dir.path("cut.json")});
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST(TraceCli, DiffPrintsHowTheSharesMoved) {
  const test::ScratchDir dir;
  Trace after = test::mlp_step_trace();
  after.kernels.pop_back();  // the transpose kernel is gone
  write_trace_file(test::mlp_step_trace(), dir.path("a.json"));
  write_trace_file(after, dir.path("b.json"));
  const auto r = run_gemmtune({"trace", "diff", dir.path("a.json"), dir.path("b.json"), "--format", "md"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "### Kernel time by category, before and after")) << r.output;
  EXPECT_TRUE(contains(r.output, "| 1.000 | 2.8 | 0.000 | 0.0 | -1.000 | -2.8 | 1 | 0 | transpose |")) << r.output;
}

TEST(TraceCli, ACommandRunsUnderTheTracerAndKeepsItsExitCode) {
  const test::ScratchDir dir;
  const bool gpu = test::gpu_unavailable_reason().empty();
  auto r = run_gemmtune({"trace", "--out", dir.path("t.json"), "--", "sh", "-c", "echo traced-output"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "traced-output")) << r.output;
  EXPECT_TRUE(contains(r.output, "Summary:")) << r.output;
  const Trace t = read_trace_file(dir.path("t.json"));
  EXPECT_EQ(t.command, (std::vector<std::string>{"sh", "-c", "echo traced-output"}));
  EXPECT_TRUE(t.kernels.empty());
  if (!gpu) {
    EXPECT_TRUE(contains(r.output, "no usable CUDA GPU")) << r.output;
  }
  // A failing command: its own status where a GPU is usable; without one, 3 (it may have failed for want of one).
  r = run_gemmtune({"trace", "--no-tables", "--", "sh", "-c", "exit 7"});
  EXPECT_EQ(r.exit_code, gpu ? 7 : 3) << r.output;
}

TEST(TraceCli, EveryKernelOfATracedGemmtuneRunIsCountedInItsCaseRange) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  constexpr int kIters = 40;
  const auto r = run_gemmtune({"trace", "--out", dir.path("t.json"), "--no-tables", "--", GEMMTUNE_BINARY, "run",
                               "--m", "256", "--n", "256", "--k", "256", "--mode", "tf32", "--candidate",
                               "own/tf32_128x128x32_w64x64_s3", "--iters", std::to_string(kIters), "--warmup", "3",
                               "--db", dir.path("none.db")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Trace t = read_trace_file(dir.path("t.json"));
  ASSERT_FALSE(t.kernels.empty());
  const std::vector<long> range_of = kernel_ranges(t);
  int in_case = 0;
  std::string name;
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    EXPECT_TRUE(t.kernels[i].launch_tid.has_value()) << t.kernels[i].name;
    if (range_of[i] < 0) continue;
    const TraceRange& range = t.ranges[static_cast<std::size_t>(range_of[i])];
    if (range.domain != "gemmtune" || !contains(range.name, "|own|tf32_128x128x32_w64x64_s3")) continue;
    ++in_case;
    if (name.empty()) name = t.kernels[i].name;
    EXPECT_EQ(t.kernels[i].name, name);
  }
  // One kernel per timed call: each of the --iters calls ran inside its own case range.
  EXPECT_EQ(in_case, kIters);
}

// With --gemms each kernel a cublasLtMatmul call launched names that call: the launch callback reads the shim's
// current call (CUPTI's external correlation records, which come only with the API activity kinds, are not used).
TEST(TraceCli, WithGemmsEveryKernelOfACublasLtCallNamesItsCall) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  constexpr int kIters = 30;
  // cuBLASLt's heuristic-first, pinned: without it the first-use trial may pick cublasSgemm, which is judged by its
  // median against heuristic-first. --no-replays: every call calls cuBLASLt (a repeated call would otherwise replay
  // its CUDA graph, launching its kernel with no call).
  const GemmProblem p = GemmProblem::parse_key("fwd:300x200x100:nn:row:none:tf32");
  const std::vector<Candidate> first = LtGemm(make_lt_handle().get(), p).heuristic(1, std::size_t{64} << 20);
  ASSERT_FALSE(first.empty());
  const auto r = run_gemmtune({"trace", "--gemms", "--out", dir.path("t.json"), "--no-tables", "--", GEMMTUNE_BINARY,
                               "run", "--m", "300", "--n", "200", "--k", "100", "--mode", "tf32", "--iters",
                               std::to_string(kIters), "--warmup", "2", "--no-replays", "--db", dir.path("none.db"),
                               "--candidate", first.front().id()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Trace t = read_trace_file(dir.path("t.json"));
  ASSERT_FALSE(t.gemms_called.empty());
  const std::vector<long> range_of = kernel_ranges(t);
  int in_case = 0, named = 0;
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    if (range_of[i] < 0) continue;
    const TraceRange& range = t.ranges[static_cast<std::size_t>(range_of[i])];
    if (range.domain != "gemmtune" || !contains(range.name, "|lt|")) continue;
    ++in_case;
    if (!t.kernels[i].gemm) continue;
    ++named;
    EXPECT_EQ(t.gemms_called[*t.kernels[i].gemm].api(), "cublasLtMatmul");
    EXPECT_GT(t.kernels[i].gemm_call, 0u);
  }
  EXPECT_GE(in_case, kIters);
  EXPECT_EQ(named, in_case);
  ASSERT_TRUE(t.gemm_coverage.has_value());
  EXPECT_GT(*t.gemm_coverage, 0.0);
}

}  // namespace
}  // namespace gemmtune
