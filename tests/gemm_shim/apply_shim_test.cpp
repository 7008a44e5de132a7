// The GEMM shim under `gemmtune apply` (GEMMTUNE_APPLY=1, router.hpp) with no GPU to run on, on any machine (CUDA is
// shown none): the fake cuBLAS and cuBLASLt (tests/trace/fake_cublas, fake_cublaslt) must get every call exactly as
// the program made it, and the report must say for each why it stayed with the library: the routing rule's reason,
// or, for a call the rule would route, that there is no runtime in this process (no GPU; where the runtime links
// cuBLAS, the fake one, already loaded under cuBLAS's soname, also keeps it from loading: either way it must not
// load half a runtime or break a call).
#include <gtest/gtest.h>

#include <cublas_api.h>

#include <filesystem>
#include <string>
#include <vector>

#include "apply/apply_report.hpp"
#include "apply/apply_settings.hpp"
#include "profiler/process.hpp"
#include "support/scratch_dir.hpp"
#include "gemm_shim/blas_call_spec.hpp"

namespace gemmtune {
namespace {

using test::batched;
using test::call;
using test::spec;
using test::with_compute;

constexpr int N = CUBLAS_OP_N, T = CUBLAS_OP_T;

// The program's command under the shim with apply on, CUDA shown no GPU, report parts written to dir.
std::vector<std::string> under_apply(const std::string& program, const std::string& dir) {
  return {"env",
          std::string("LD_PRELOAD=") + GEMMTUNE_TRACE_GEMM_SHIM,
          "CUDA_VISIBLE_DEVICES=",
          std::string(apply::kApplyEnv) + "=1",
          std::string(apply::kDbEnv) + "=" + dir + "/none.db",
          std::string(apply::kReportDirEnv) + "=" + dir,
          program};
}

const apply::ReportRow* row_of(const std::vector<apply::ReportRow>& rows, const std::string& api) {
  for (const apply::ReportRow& r : rows)
    if (r.api == api) return &r;
  return nullptr;
}

TEST(ApplyShim, WithNoGpuEveryCublasCallReachesCublasUnchangedAndTheReportSaysWhy) {
  const test::ScratchDir scratch;
  BlasCallDesc scaled = call("cublasSgemmEx", N, N, 32, 32, 32, 32, 32, 32);
  scaled.alpha = 2.0;
  const std::vector<std::pair<BlasCallDesc, std::string>> cases = {
      {call("cublasSgemm_v2", N, N, 128, 64, 256, 128, 256, 128), "no runtime in this process"},
      {with_compute(call("cublasGemmEx", T, N, 96, 40, 24, 24, 24, 96), CUBLAS_COMPUTE_32F_FAST_TF32),
       "no runtime in this process"},
      {scaled, "alpha = 2"},
      {batched(call("cublasSgemmStridedBatched", N, N, 48, 24, 12, 48, 12, 48), 6, 576, 288, 1152), "batched (6)"},
      {batched(call("cublasSgemmBatched", N, T, 20, 10, 5, 20, 10, 20), 3), "pointer-array batched"},
      {call("cublasSgemm", T, N, 80, 8, 4, 4, 4, 80), "legacy cuBLAS API"},
  };
  std::vector<std::string> argv = under_apply(GEMMTUNE_FAKE_BLAS_CALLER, scratch.path());
  for (const auto& [c, why] : cases) argv.push_back(spec(c));
  argv.push_back(spec(cases[0].first));  // the same call again: one row, two calls
  const ProcessOutput r = capture_process(argv);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("fake cuBLAS got " + std::to_string(cases.size() + 1) + " calls, 0 of them changed"),
            std::string::npos)
      << r.out << r.err;
  const std::vector<apply::ReportRow> rows = apply::read_report_parts(scratch.path());
  ASSERT_EQ(rows.size(), cases.size()) << r.err;
  for (const auto& [c, why] : cases) {
    const apply::ReportRow* row = row_of(rows, c.api);
    ASSERT_NE(row, nullptr) << c.api;
    EXPECT_EQ(row->calls, c.api == cases[0].first.api ? 2u : 1u) << c.api;
    EXPECT_EQ(row->routed_calls, 0u) << c.api;
    EXPECT_NE(row->reason.find(why), std::string::npos) << c.api << ": " << row->reason;
  }
  EXPECT_EQ(row_of(rows, "cublasSgemm_v2")->problem, "fwd:64x128x256:nn:row:none:fp32");
}

TEST(ApplyShim, WithNoGpuEveryCublasLtCallReachesCublasLtAndTheReportSaysWhy) {
  const test::ScratchDir scratch;
  const ProcessOutput r = capture_process(under_apply(GEMMTUNE_FAKE_LT_CALLER, scratch.path()));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("fake cuBLASLt saw 4 calls"), std::string::npos) << r.out;
  const std::vector<apply::ReportRow> rows = apply::read_report_parts(scratch.path());
  ASSERT_EQ(rows.size(), 3u) << r.err;
  EXPECT_EQ(rows[0].problem, "fwd:64x256x128:nt:row:bias:tf32");
  EXPECT_EQ(rows[0].calls, 2u);
  EXPECT_NE(rows[0].reason.find("no runtime in this process"), std::string::npos) << rows[0].reason;
  EXPECT_NE(rows[1].reason.find("bf16"), std::string::npos) << rows[1].reason;
}

TEST(ApplyShim, UnlessApplyIsOnNothingIsRoutedOrReported) {
  const test::ScratchDir scratch;
  std::vector<std::string> argv = under_apply(GEMMTUNE_FAKE_BLAS_CALLER, scratch.path());
  argv[3] = std::string(apply::kApplyEnv) + "=0";
  argv.push_back(spec(call("cublasSgemm_v2", N, N, 64, 64, 64, 64, 64, 64)));
  const ProcessOutput r = capture_process(argv);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("0 of them changed"), std::string::npos) << r.out;
  EXPECT_TRUE(apply::read_report_parts(scratch.path()).empty());
}

}  // namespace
}  // namespace gemmtune
