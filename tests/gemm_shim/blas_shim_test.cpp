// The --gemms shim (libgemmtune_trace_gemms.so) in front of a cuBLAS program, on a CPU: a fake libcublas.so.13
// (tests/trace/fake_cublas, versioned symbols like the real one) called from a module the program loads RTLD_LOCAL,
// as PyTorch's cuBLAS is. Every entry point must be recorded with the arguments it was called with (so the mapping,
// tested in trace/blas_call_test.cpp, sees the call as it was), every call must reach cuBLAS unchanged with its
// status returned, a call cuBLAS makes to itself must not count, and outside `gemmtune trace` nothing is written.
#include <gtest/gtest.h>

#include <cublas_api.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "profiler/process.hpp"
#include "support/scratch_dir.hpp"
#include "trace/blas_call.hpp"
#include "gemm_shim/blas_call_spec.hpp"
#include "trace/raw_format.hpp"

namespace gemmtune {
namespace {

namespace fs = std::filesystem;

using test::batched;
using test::call;
using test::spec;
using test::with_compute;
using test::with_math;

struct ShimCase {
  BlasCallDesc call;
  std::string expect;  // the problem key, or a part of the reason it is not tunable
};

constexpr int N = CUBLAS_OP_N, T = CUBLAS_OP_T;

// Every entry point, each layout, and calls gemmtune's problems cannot express. Row-major Y (M×N) = op(X)·op(W) is
// cuBLAS's C = Yᵀ: m = N, n = M; transa is W's op, transb X's.
std::vector<ShimCase> shim_cases() {
  std::vector<ShimCase> cases = {
      {call("cublasSgemm_v2", N, N, 128, 64, 256, 128, 256, 128), "fwd:64x128x256:nn:row:none:fp32"},
      {with_math(call("cublasSgemm_v2", N, T, 128, 256, 64, 128, 256, 128), CUBLAS_TF32_TENSOR_OP_MATH),
       "fwd:256x128x64:tn:row:none:tf32"},
      {call("cublasSgemm_v2_64", T, N, 96, 40, 24, 24, 24, 96), "fwd:40x96x24:nt:row:none:fp32"},
      {with_compute(call("cublasGemmEx", T, T, 96, 40, 24, 24, 40, 96), CUBLAS_COMPUTE_32F_FAST_TF32),
       "fwd:40x96x24:tt:row:none:tf32"},
      {with_math(with_compute(call("cublasGemmEx_64", N, N, 33, 17, 9, 33, 9, 33), CUBLAS_COMPUTE_32F),
                 CUBLAS_TF32_TENSOR_OP_MATH),
       "fwd:17x33x9:nn:row:none:tf32"},
      {call("cublasSgemmEx", N, T, 64, 32, 16, 64, 32, 64), "fwd:32x64x16:tn:row:none:fp32"},
      {with_math(call("cublasSgemmEx_64", T, N, 64, 32, 16, 16, 16, 64), CUBLAS_PEDANTIC_MATH),
       "fwd:32x64x16:nt:row:none:fp32"},
      {batched(call("cublasSgemmStridedBatched", N, N, 48, 24, 12, 48, 12, 48), 1, 0, 0, 0),
       "fwd:24x48x12:nn:row:none:fp32"},
      {batched(call("cublasSgemmStridedBatched_64", N, N, 48, 24, 12, 48, 12, 48), 6, 576, 288, 1152), "batched (6)"},
      {batched(with_compute(call("cublasGemmStridedBatchedEx", T, T, 48, 24, 12, 12, 24, 48), CUBLAS_COMPUTE_32F),
               5, 576, 288, 1152),
       "batched (5)"},
      {batched(with_compute(call("cublasGemmStridedBatchedEx_64", T, N, 48, 24, 12, 12, 12, 48),
                            CUBLAS_COMPUTE_32F_FAST_TF32),
               1, 0, 0, 0),
       "fwd:24x48x12:nt:row:none:tf32"},
      {batched(call("cublasSgemmBatched", N, T, 20, 10, 5, 20, 10, 20), 3, 0, 0, 0), "batched (3)"},
      {batched(call("cublasSgemmBatched_64", N, N, 20, 10, 5, 20, 5, 20), 1, 0, 0, 0), "fwd:10x20x5:nn:row:none:fp32"},
      {batched(with_compute(call("cublasGemmBatchedEx", N, N, 20, 10, 5, 20, 5, 20), CUBLAS_COMPUTE_32F), 2, 0, 0, 0),
       "batched (2)"},
      {batched(with_compute(call("cublasGemmBatchedEx_64", T, N, 20, 10, 5, 5, 5, 20), CUBLAS_COMPUTE_32F), 1, 0, 0, 0),
       "fwd:10x20x5:nt:row:none:fp32"},
      {with_math(call("cublasSgemm", T, N, 80, 8, 4, 4, 4, 80), -1), "fwd:8x80x4:nt:row:none:fp32"},
      // Not expressible: shown with their reason.
      {call("cublasSgemm_v2", N, N, 128, 64, 256, 136, 256, 128), "leading dimension 136"},
      {call("cublasGemmEx", N, N, 128, 64, 256, 128, 256, 130), "leading dimension 130"},
      {with_compute(call("cublasGemmEx", N, N, 64, 64, 64, 64, 64, 64), CUBLAS_COMPUTE_32F_FAST_16BF), "32F_FAST_16BF"},
      {with_math(call("cublasSgemm_v2", N, N, 64, 64, 64, 64, 64, 64), CUBLAS_TENSOR_OP_MATH), "32F_FAST_16F"},
  };
  BlasCallDesc bf16 = with_compute(call("cublasGemmEx", N, N, 32, 32, 32, 32, 32, 32), CUBLAS_COMPUTE_32F);
  bf16.a_type = bf16.b_type = bf16.c_type = CUDA_R_16BF;
  cases.push_back({bf16, "bf16 data"});
  BlasCallDesc scaled = call("cublasSgemm_v2", N, N, 32, 32, 32, 32, 32, 32);
  scaled.alpha = 0.5;
  cases.push_back({scaled, "alpha = 0.5"});
  BlasCallDesc accumulate = call("cublasSgemm_v2", T, T, 32, 32, 32, 32, 32, 32);
  accumulate.beta = 1.0;
  cases.push_back({accumulate, "accumulates into C"});
  BlasCallDesc device = call("cublasSgemm_v2", N, T, 32, 32, 32, 32, 32, 32);
  device.pointer_mode = CUBLAS_POINTER_MODE_DEVICE;
  cases.push_back({device, "on the device"});
  return cases;
}

// The shim's records, with the fake's caller run under it: signature lines in signature order.
std::vector<nlohmann::json> run_under_shim(const std::vector<std::string>& specs, const fs::path& dir,
                                           ProcessOutput* out) {
  std::vector<std::string> argv = {"env", std::string("LD_PRELOAD=") + GEMMTUNE_TRACE_GEMM_SHIM,
                                   std::string(trace_raw::kDirEnv) + "=" + dir.string(), GEMMTUNE_FAKE_BLAS_CALLER};
  argv.insert(argv.end(), specs.begin(), specs.end());
  *out = capture_process(argv);
  std::vector<nlohmann::json> lines;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  }
  return lines;
}

TEST(BlasShim, EveryEntryPointIsRecordedAsCalledAndMapsToItsProblem) {
  const test::ScratchDir scratch;
  const fs::path dir = fs::path(scratch.path("records"));
  fs::create_directories(dir);
  const std::vector<ShimCase> cases = shim_cases();
  std::vector<std::string> specs;
  for (const ShimCase& c : cases) specs.push_back(spec(c.call));
  specs.push_back(spec(cases[0].call));  // the same call again: one signature, two calls
  ProcessOutput r;
  const std::vector<nlohmann::json> lines = run_under_shim(specs, dir, &r);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("fake cuBLAS got " + std::to_string(specs.size()) + " calls, 0 of them changed"),
            std::string::npos)
      << r.out;
  // cublasSgemmBatched's three inner cublasSgemm_v2 calls go through the shim too, and are not recorded.
  ASSERT_EQ(lines.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const ShimCase& c = cases[i];
    const nlohmann::json& line = lines[i];
    EXPECT_EQ(line.at("t"), "blas");
    EXPECT_EQ(line.at("sig"), i + 1);
    EXPECT_EQ(line.at("calls"), i == 0 ? 2 : 1) << c.call.api;
    const BlasCallDesc recorded = line.at("call").get<BlasCallDesc>();
    BlasCallDesc expected = c.call;
    if (expected.pointer_mode == CUBLAS_POINTER_MODE_DEVICE) expected.alpha = expected.beta = std::nullopt;
    EXPECT_TRUE(recorded == expected) << c.call.api << "\n  recorded " << line.at("call").dump() << "\n  called   "
                                      << nlohmann::json(expected).dump();
    const GemmCallProblem p = blas_call_problem(recorded);
    if (c.expect.rfind("fwd:", 0) == 0) {
      EXPECT_TRUE(p.tunable) << c.call.api << ": " << p.reason;
      EXPECT_EQ(p.problem.key(), c.expect) << c.call.api;
    } else {
      EXPECT_FALSE(p.tunable) << c.call.api << ": " << c.expect;
      EXPECT_NE(p.reason.find(c.expect), std::string::npos) << c.call.api << ": " << p.reason;
    }
  }
}

TEST(BlasShim, OutsideGemmtuneTraceItOnlyPassesCallsThrough) {
  const std::vector<ShimCase> cases = shim_cases();
  std::vector<std::string> argv = {"env", std::string("LD_PRELOAD=") + GEMMTUNE_TRACE_GEMM_SHIM,
                                   GEMMTUNE_FAKE_BLAS_CALLER};
  for (const ShimCase& c : cases) argv.push_back(spec(c.call));
  const ProcessOutput r = capture_process(argv);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("fake cuBLAS got " + std::to_string(cases.size()) + " calls, 0 of them changed"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace gemmtune
