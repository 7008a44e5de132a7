// The router of `gemmtune apply` (src/gemm_shim/router.hpp) on a CPU: the fake cuBLAS program runs under a copy of
// the shim with a fake backend beside it (tests/gemm_shim/fake_backend), which routes, refuses, defers a problem seen
// in a capture, or fails by the problem's key. What must hold: a routed call reaches the backend with the call's B as
// the runtime's A, its A as B and its C as Y, and not cuBLAS; a problem first seen in a capture goes to cuBLAS and is
// asked again; a failed run goes to cuBLAS with one warning, and its signature is not routed again; a run the backend
// refuses (another GPU) goes to cuBLAS alone; an entry that is cuBLAS's own choice leaves a cuBLAS call with cuBLAS;
// the report counts each outcome's calls; --record reaches the backend.
#include <gtest/gtest.h>

#include <cublas_api.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "apply/apply_report.hpp"
#include "apply/apply_settings.hpp"
#include "gemm_shim/blas_call_spec.hpp"
#include "profiler/process.hpp"
#include "support/scratch_dir.hpp"

namespace gemmtune {
namespace {

namespace fs = std::filesystem;

using test::call;
using test::spec;
using test::with_math;

constexpr int N = CUBLAS_OP_N;

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

const apply::ReportRow* find_row(const std::vector<apply::ReportRow>& rows, const std::string& problem,
                                 std::uint64_t routed_calls) {
  for (const apply::ReportRow& r : rows)
    if (r.problem == problem && (r.routed_calls > 0) == (routed_calls > 0)) return &r;
  return nullptr;
}

TEST(ApplyRouter, RoutesDefersAndFailsOverAsTheBackendSaysAndCountsEachOutcome) {
  const test::ScratchDir scratch;
  const fs::path dir(scratch.path());
  fs::copy_file(GEMMTUNE_TRACE_GEMM_SHIM, dir / "libgemmtune_trace_gemms.so");
  fs::copy_file(GEMMTUNE_FAKE_APPLY_BACKEND, dir / "libgemmtune_apply_backend.so");
  fs::create_directories(dir / "parts");
  const std::string routed = spec(call("cublasSgemm_v2", N, N, 128, 64, 256, 128, 256, 128));
  const std::string tf32 = spec(with_math(call("cublasSgemm_v2_64", N, N, 64, 64, 64, 64, 64, 64),
                                          CUBLAS_TF32_TENSOR_OP_MATH));
  const std::string captured = spec(call("cublasSgemmEx", N, N, 48, 17, 12, 48, 12, 48));
  const std::string failing = spec(call("cublasGemmEx", N, N, 64, 33, 16, 64, 16, 64));
  const std::string elsewhere = spec(call("cublasSgemm_v2", CUBLAS_OP_T, N, 96, 40, 24, 24, 24, 96));
  const std::string cublas_choice = spec(call("cublasSgemm_v2", N, N, 72, 56, 8, 72, 8, 72));
  const ProcessOutput r = capture_process(
      {"env", "LD_PRELOAD=" + (dir / "libgemmtune_trace_gemms.so").string(), std::string(apply::kApplyEnv) + "=1",
       std::string(apply::kRecordEnv) + "=1", std::string(apply::kReportDirEnv) + "=" + (dir / "parts").string(),
       "FAKE_BACKEND_LOG=" + (dir / "backend.log").string(), GEMMTUNE_FAKE_BLAS_CALLER, routed, routed, tf32,
       captured, captured, failing, failing, elsewhere, elsewhere, cublas_choice});
  ASSERT_EQ(r.status, 0) << r.out << r.err;

  // The runs the backend got: the routed problem twice and the deferred one once, operands in the problem's order
  // (the fake module passes A 0x1000, B 0x2000, C 0x3000) on the handle's stream (0x5000); the failing one never
  // counted; the refused problem recorded as a miss when it was met.
  const std::vector<std::string> log = lines_of((dir / "backend.log").string());
  ASSERT_EQ(log.size(), 4u) << r.err;
  EXPECT_EQ(log[0], "RUN fwd:64x128x256:nn:row:none:fp32 0x2000 0x1000 0x3000 on 0x5000");
  EXPECT_EQ(log[1], log[0]);
  EXPECT_EQ(log[2], "MISS fwd:64x64x64:nn:row:none:tf32");
  EXPECT_EQ(log[3], "RUN fwd:17x48x12:nn:row:none:fp32 0x2000 0x1000 0x3000 on 0x5000");
  EXPECT_EQ(count(r.err, "gemmtune apply: warning:"), 1u) << r.err;
  EXPECT_EQ(count(r.err, "fake failure"), 1u) << r.err;

  const std::vector<apply::ReportRow> rows = apply::read_report_parts((dir / "parts").string());
  const apply::ReportRow* ran = find_row(rows, "fwd:64x128x256:nn:row:none:fp32", 1);
  ASSERT_NE(ran, nullptr);
  EXPECT_EQ(ran->calls, 2u);
  EXPECT_EQ(ran->routed_calls, 2u);
  EXPECT_EQ(ran->candidate, "own/fake");
  const apply::ReportRow* refused = find_row(rows, "fwd:64x64x64:nn:row:none:tf32", 0);
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->reason, "no usable exact entry (fake)");
  const apply::ReportRow* deferred = find_row(rows, "fwd:17x48x12:nn:row:none:fp32", 0);
  const apply::ReportRow* then_routed = find_row(rows, "fwd:17x48x12:nn:row:none:fp32", 1);
  ASSERT_NE(deferred, nullptr);
  ASSERT_NE(then_routed, nullptr);
  EXPECT_EQ(deferred->calls, 1u);
  EXPECT_NE(deferred->reason.find("capture"), std::string::npos) << deferred->reason;
  EXPECT_EQ(then_routed->calls, 1u);
  const apply::ReportRow* failed = find_row(rows, "fwd:33x64x16:nn:row:none:fp32", 0);
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->calls, 2u);
  EXPECT_EQ(failed->reason, "the runtime failed: fake failure");
  // Refused at the run (another GPU without an entry): each call alone goes to cuBLAS, the signature stays routed.
  const apply::ReportRow* other_gpu = find_row(rows, "fwd:40x96x24:nt:row:none:fp32", 0);
  ASSERT_NE(other_gpu, nullptr);
  EXPECT_EQ(other_gpu->calls, 2u);
  EXPECT_EQ(other_gpu->reason, "another GPU (fake)");
  EXPECT_EQ(find_row(rows, "fwd:40x96x24:nt:row:none:fp32", 1), nullptr);
  // An entry that is cuBLAS's own choice leaves a cuBLAS call where it is.
  const apply::ReportRow* kept = find_row(rows, "fwd:56x72x8:nn:row:none:fp32", 0);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->calls, 1u);
  EXPECT_NE(kept->reason.find("cuBLAS's own choice"), std::string::npos) << kept->reason;
  EXPECT_EQ(rows.size(), 7u);
}

// The fake cuBLAS program's two calls of one routable problem under apply, the shim and the fake backend copied into
// `dir` (where the reports go too), with one more variable set.
ProcessOutput two_routable_calls(const fs::path& dir, const std::string& extra_env) {
  fs::copy_file(GEMMTUNE_TRACE_GEMM_SHIM, dir / "libgemmtune_trace_gemms.so");
  fs::copy_file(GEMMTUNE_FAKE_APPLY_BACKEND, dir / "libgemmtune_apply_backend.so");
  const std::string routed = spec(call("cublasSgemm_v2", N, N, 128, 64, 256, 128, 256, 128));
  return capture_process(
      {"env", "LD_PRELOAD=" + (dir / "libgemmtune_trace_gemms.so").string(), std::string(apply::kApplyEnv) + "=1",
       std::string(apply::kReportDirEnv) + "=" + dir.string(), extra_env,
       "FAKE_BACKEND_LOG=" + (dir / "backend.log").string(), GEMMTUNE_FAKE_BLAS_CALLER, routed, routed});
}

// A padded entry that saved less GPU time in its sweep than its launches add to the host's asks the backend to yield
// where the stream has drained; one that saved more, and any other entry, never does. Yielded calls go to cuBLAS one by
// one (the signature stays routed, the report counts them under the backend's reason); --no-host-yield routes them
// all.
TEST(ApplyRouter, APaddedEntryThatSavesLessThanItsHostCostYieldsToCublasOnADrainedStreamUnlessHostYieldIsOff) {
  const std::string padded = spec(call("cublasSgemm_v2", N, N, 128, 88, 256, 128, 256, 128));
  const std::string padded_saving = spec(call("cublasSgemm_v2", N, N, 128, 99, 256, 128, 256, 128));
  const std::string plain = spec(call("cublasSgemm_v2", N, N, 128, 64, 256, 128, 256, 128));
  for (const bool yield : {true, false}) {
    const test::ScratchDir scratch;
    const fs::path dir(scratch.path());
    fs::copy_file(GEMMTUNE_TRACE_GEMM_SHIM, dir / "libgemmtune_trace_gemms.so");
    fs::copy_file(GEMMTUNE_FAKE_APPLY_BACKEND, dir / "libgemmtune_apply_backend.so");
    const ProcessOutput r = capture_process(
        {"env", "LD_PRELOAD=" + (dir / "libgemmtune_trace_gemms.so").string(), std::string(apply::kApplyEnv) + "=1",
         std::string(apply::kReportDirEnv) + "=" + dir.string(), "FAKE_BACKEND_DRAINED=1",
         std::string(apply::kNoHostYieldEnv) + (yield ? "=0" : "=1"),
         "FAKE_BACKEND_LOG=" + (dir / "backend.log").string(), GEMMTUNE_FAKE_BLAS_CALLER, padded, padded, plain,
         padded_saving});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    const std::vector<std::string> log = lines_of((dir / "backend.log").string());
    const std::vector<apply::ReportRow> rows = apply::read_report_parts(dir.string());
    const apply::ReportRow* yielded = find_row(rows, "fwd:88x128x256:nn:row:none:fp32", 0);
    const apply::ReportRow* routed = find_row(rows, "fwd:88x128x256:nn:row:none:fp32", 1);
    ASSERT_EQ(log.size(), 4u) << r.err;
    EXPECT_EQ(log[3], "RUN fwd:99x128x256:nn:row:none:fp32 0x2000 0x1000 0x3000 on 0x5000");
    if (yield) {
      EXPECT_EQ(log[0], "YIELD fwd:88x128x256:nn:row:none:fp32");
      EXPECT_EQ(log[1], log[0]);
      EXPECT_EQ(log[2], "RUN fwd:64x128x256:nn:row:none:fp32 0x2000 0x1000 0x3000 on 0x5000");
      ASSERT_NE(yielded, nullptr);
      EXPECT_EQ(yielded->calls, 2u);
      EXPECT_EQ(yielded->reason, "drained (fake)");
      EXPECT_EQ(routed, nullptr);
    } else {
      EXPECT_EQ(log[0], "RUN fwd:88x128x256:nn:row:none:fp32 0x2000 0x1000 0x3000 on 0x5000");
      ASSERT_NE(routed, nullptr);
      EXPECT_EQ(routed->routed_calls, 2u);
      EXPECT_EQ(routed->candidate, "lt/fake+pad");
      EXPECT_EQ(yielded, nullptr);
    }
  }
}

TEST(ApplyRouter, ABackendThatCannotOpenLeavesEveryCallToCublasWithItsReason) {
  const test::ScratchDir scratch;
  const fs::path dir(scratch.path());
  const ProcessOutput r = two_routable_calls(dir, "FAKE_BACKEND_NO_GPU=1");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("fake cuBLAS got 2 calls, 0 of them changed"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "backend.log"));
  const std::vector<apply::ReportRow> rows = apply::read_report_parts(dir.string());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].calls, 2u);
  EXPECT_EQ(rows[0].reason, "no runtime in this process: no GPU (fake)");
}

// A memory budget the launcher set but wrote wrong is not dropped (which could take memory the program counted on):
// nothing is routed, the backend is never opened, and the report says which variable is wrong.
TEST(ApplyRouter, AnUnreadableMemoryBudgetRoutesNothingAndSaysWhichVariable) {
  const test::ScratchDir scratch;
  const fs::path dir(scratch.path());
  const ProcessOutput r = two_routable_calls(dir, std::string(apply::kMemoryEnv) + "=2GiB");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("fake cuBLAS got 2 calls, 0 of them changed"), std::string::npos) << r.out;
  EXPECT_EQ(count(r.err, "gemmtune apply: warning"), 1u) << r.err;
  EXPECT_FALSE(fs::exists(dir / "backend.log"));
  const std::vector<apply::ReportRow> rows = apply::read_report_parts(dir.string());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NE(rows[0].reason.find(apply::kMemoryEnv), std::string::npos) << rows[0].reason;
}

TEST(ApplyRouter, AProgramOnAnotherCublasKeepsItsOwnAfterTheBackendBroughtOne) {
  // The program is on a fake libcublas.so.12 (loaded RTLD_LOCAL, as PyTorch's); the backend, loaded at the first
  // routed call, brings a fake libcublas.so.13. An entry point first called after that must still reach the 12.
  const test::ScratchDir scratch;
  const fs::path dir(scratch.path());
  fs::copy_file(GEMMTUNE_TRACE_GEMM_SHIM, dir / "libgemmtune_trace_gemms.so");
  fs::copy_file(GEMMTUNE_FAKE_APPLY_BACKEND, dir / "libgemmtune_apply_backend.so");
  const std::string routed = spec(call("cublasSgemm_v2", N, N, 128, 64, 256, 128, 256, 128));
  const std::string later =
      spec(test::with_compute(call("cublasGemmEx", N, N, 64, 64, 64, 64, 64, 64), CUBLAS_COMPUTE_32F_FAST_TF32));
  const ProcessOutput r = capture_process(
      {"env", "LD_PRELOAD=" + (dir / "libgemmtune_trace_gemms.so").string(), std::string(apply::kApplyEnv) + "=1",
       "FAKE_BACKEND_LOG=" + (dir / "backend.log").string(), GEMMTUNE_FAKE_BLAS12_CALLER, routed, later});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(lines_of((dir / "backend.log").string()).size(), 1u) << "the first call was not routed: " << r.err;
  // The routed call never reached the program's cuBLAS (so the module sees it as changed); the later one did, intact.
  EXPECT_NE(r.out.find("call 0 (cublasSgemm_v2) reached cuBLAS changed"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("call 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fake cuBLAS got 2 calls, 1 of them changed"), std::string::npos) << r.out;
}

TEST(ApplyRouter, CallsFromManyThreadsAreEachRoutedOrPassedOnceAndCounted) {
  const test::ScratchDir scratch;
  const fs::path dir(scratch.path());
  fs::copy_file(GEMMTUNE_TRACE_GEMM_SHIM, dir / "libgemmtune_trace_gemms.so");
  fs::copy_file(GEMMTUNE_FAKE_APPLY_BACKEND, dir / "libgemmtune_apply_backend.so");
  constexpr int kThreads = 8, kCalls = 250;
  const ProcessOutput r = capture_process(
      {"env", "LD_PRELOAD=" + (dir / "libgemmtune_trace_gemms.so").string(), std::string(apply::kApplyEnv) + "=1",
       std::string(apply::kReportDirEnv) + "=" + dir.string(), "FAKE_BACKEND_LOG=" + (dir / "backend.log").string(),
       GEMMTUNE_THREADED_BLAS_CALLER, std::to_string(kThreads), std::to_string(kCalls)});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> log = lines_of((dir / "backend.log").string());
  EXPECT_EQ(log.size(), static_cast<std::size_t>(kThreads * kCalls));
  const std::vector<apply::ReportRow> rows = apply::read_report_parts(dir.string());
  ASSERT_EQ(rows.size(), 2u);
  for (const apply::ReportRow& row : rows) {
    EXPECT_EQ(row.calls, static_cast<std::uint64_t>(kThreads * kCalls)) << row.problem;
    EXPECT_EQ(row.routed_calls, row.problem.find(":tf32") == std::string::npos ? row.calls : 0u) << row.problem;
  }
}

}  // namespace
}  // namespace gemmtune
