#include "trace/blas_call.hpp"

#include <cublasLt.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace gemmtune {
namespace {

constexpr const char* kEntryPoints[] = {
    "cublasSgemm_v2",           "cublasSgemm_v2_64",           "cublasSgemmEx",
    "cublasSgemmEx_64",         "cublasGemmEx",                "cublasGemmEx_64",
    "cublasSgemmBatched",       "cublasSgemmBatched_64",       "cublasGemmBatchedEx",
    "cublasGemmBatchedEx_64",   "cublasSgemmStridedBatched",   "cublasSgemmStridedBatched_64",
    "cublasGemmStridedBatchedEx", "cublasGemmStridedBatchedEx_64", "cublasSgemm"};

// cublasGemmEx and its batched forms take a compute type; the S routines compute in 32F.
bool takes_compute_type(const std::string& api) { return api.rfind("cublasGemm", 0) == 0; }

// How a row-major program calls cuBLAS for p (Y = A·B as cuBLAS's C = Yᵀ = Bᵀ·Aᵀ, PyTorch's way), written here
// independently of the code under test: cuBLAS's A is gemmtune's B (row-major k×n is column-major n×k, ld n; stored
// n×k it is column-major k×n, ld k, read transposed), its B is gemmtune's A, C is n×m at ld n.
BlasCallDesc row_major_call(const GemmProblem& p, const std::string& api) {
  BlasCallDesc c;
  c.api = api;
  c.transa = p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  c.transb = p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  c.m = p.n;
  c.n = p.m;
  c.k = p.k;
  c.lda = p.trans_b ? p.k : p.n;
  c.ldb = p.trans_a ? p.m : p.k;
  c.ldc = p.n;
  c.a_type = c.b_type = c.c_type = CUDA_R_32F;
  const bool tf32 = p.mode == MathMode::Tf32;
  if (takes_compute_type(api)) {
    c.compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    c.math_mode = CUBLAS_DEFAULT_MATH;
  } else {
    c.math_mode = tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
  }
  if (api == "cublasSgemm") c.math_mode = -1;  // the legacy API has no handle, hence no tf32
  c.alpha = 1.0;
  c.beta = 0.0;
  return c;
}

GemmProblem problem(std::int64_t m, std::int64_t n, std::int64_t k, bool ta, bool tb, MathMode mode) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.trans_a = ta;
  p.trans_b = tb;
  p.mode = mode;
  return p;
}

TEST(BlasCallProblem, EveryEntryPointAndLayoutOfARowMajorCallMapsBackToItsProblem) {
  int checked = 0;
  for (const std::string api : kEntryPoints)
    for (MathMode mode : {MathMode::Fp32, MathMode::Tf32})
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          if (api == "cublasSgemm" && mode == MathMode::Tf32) continue;
          // Distinct m, n, k so a swapped dimension cannot go unnoticed.
          const GemmProblem p = problem(96, 256, 40, ta, tb, mode);
          const GemmCallProblem r = blas_call_problem(row_major_call(p, api));
          ASSERT_TRUE(r.tunable) << api << " " << p.key() << ": " << r.reason;
          EXPECT_EQ(r.problem.key(), p.key()) << api;
          ++checked;
        }
  EXPECT_EQ(checked, 14 * 2 * 4 + 4);
}

TEST(BlasCallProblem, PyTorchLinearBackwardProductsAreNnAndTnProblems) {
  // Linear(128 -> 256), x[64×128], gY[64×256]. grad_x = gY·W: cublasSgemm(N, N, 128, 64, 256, W, 128, gY, 256, C, 128).
  BlasCallDesc grad_x;
  grad_x.api = "cublasSgemm_v2";
  grad_x.m = 128;
  grad_x.n = 64;
  grad_x.k = 256;
  grad_x.lda = 128;
  grad_x.ldb = 256;
  grad_x.ldc = 128;
  grad_x.math_mode = CUBLAS_TF32_TENSOR_OP_MATH;
  grad_x.alpha = 1.0;
  grad_x.beta = 0.0;
  GemmCallProblem r = blas_call_problem(grad_x);
  ASSERT_TRUE(r.tunable) << r.reason;
  EXPECT_EQ(r.problem.key(), "fwd:64x128x256:nn:row:none:tf32");
  // grad_W = gYᵀ·x, gYᵀ a transposed view: cublasSgemm(N, T, 128, 256, 64, x, 128, gY, 256, C, 128).
  BlasCallDesc grad_w = grad_x;
  grad_w.transb = CUBLAS_OP_T;
  grad_w.m = 128;
  grad_w.n = 256;
  grad_w.k = 64;
  grad_w.lda = 128;
  grad_w.ldb = 256;
  grad_w.ldc = 128;
  r = blas_call_problem(grad_w);
  ASSERT_TRUE(r.tunable) << r.reason;
  EXPECT_EQ(r.problem.key(), "fwd:256x128x64:tn:row:none:tf32");
  EXPECT_EQ(r.shape, "256x128x64 tn tf32 none");
}

struct ModeCase {
  const char* api;
  int compute;
  int math_mode;
  const char* expect;  // "fp32", "tf32" or a part of the reason it is not tunable
};

TEST(BlasCallProblem, TheMathModeIsTheComputeTypeAsTheHandlesMathModeChangesIt) {
  const ModeCase cases[] = {
      {"cublasSgemm_v2", -1, CUBLAS_DEFAULT_MATH, "fp32"},
      {"cublasSgemm_v2", -1, CUBLAS_PEDANTIC_MATH, "fp32"},
      {"cublasSgemm_v2", -1, CUBLAS_TF32_TENSOR_OP_MATH, "tf32"},
      {"cublasSgemm_v2", -1, CUBLAS_TF32_TENSOR_OP_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION, "tf32"},
      {"cublasSgemm_v2", -1, CUBLAS_TENSOR_OP_MATH, "32F_FAST_16F"},
      {"cublasSgemm_v2", -1, CUBLAS_FP32_EMULATED_BF16X9_MATH, "32F_EMULATED_16BFX9"},
      {"cublasSgemm_v2", -1, 99, "math mode 99"},
      {"cublasSgemm", -1, -1, "fp32"},
      {"cublasGemmEx", CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH, "fp32"},
      {"cublasGemmEx", CUBLAS_COMPUTE_32F, CUBLAS_PEDANTIC_MATH, "fp32"},
      {"cublasGemmEx", CUBLAS_COMPUTE_32F, CUBLAS_TF32_TENSOR_OP_MATH, "tf32"},
      {"cublasGemmEx", CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_DEFAULT_MATH, "tf32"},
      {"cublasGemmEx", CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_PEDANTIC_MATH, "tf32"},
      {"cublasGemmEx", CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_TF32_TENSOR_OP_MATH, "fp32"},
      {"cublasGemmEx", CUBLAS_COMPUTE_32F_FAST_16BF, CUBLAS_DEFAULT_MATH, "32F_FAST_16BF"},
      {"cublasGemmEx", CUBLAS_COMPUTE_64F, CUBLAS_DEFAULT_MATH, "compute type 64F"},
  };
  for (const ModeCase& m : cases) {
    BlasCallDesc c = row_major_call(problem(96, 256, 40, false, true, MathMode::Fp32), m.api);
    c.compute = m.compute;
    c.math_mode = m.math_mode;
    const GemmCallProblem r = blas_call_problem(c);
    const std::string what = std::string(m.api) + " compute " + std::to_string(m.compute) + " math " +
                             std::to_string(m.math_mode);
    if (std::string(m.expect) == "fp32" || std::string(m.expect) == "tf32") {
      ASSERT_TRUE(r.tunable) << what << ": " << r.reason;
      EXPECT_EQ(to_string(r.problem.mode), std::string(m.expect)) << what;
    } else {
      EXPECT_FALSE(r.tunable) << what;
      EXPECT_NE(r.reason.find(m.expect), std::string::npos) << what << ": " << r.reason;
    }
  }
}

struct Untunable {
  const char* what;
  const char* api;
  void (*change)(BlasCallDesc&);
  const char* reason_part;
  const char* shape_part;
};

TEST(BlasCallProblem, CallsOutsideTheProblemModelAreShownWithTheirReason) {
  const Untunable cases[] = {
      {"padded lda", "cublasSgemm_v2", [](BlasCallDesc& c) { c.lda += 4; }, "leading dimension 260", "ld 260/40/256"},
      {"padded ldb", "cublasGemmEx", [](BlasCallDesc& c) { c.ldb += 1; }, "leading dimension 41", "ld 256/41/256"},
      {"padded ldc", "cublasSgemmEx", [](BlasCallDesc& c) { c.ldc = 512; }, "leading dimension 512", "ld 256/40/512"},
      {"strided batch", "cublasSgemmStridedBatched",
       [](BlasCallDesc& c) { c.batch = 8; c.stride_a = 256 * 40; c.stride_b = 40 * 96; c.stride_c = 256 * 96; },
       "batched (8)", "batch 8"},
      {"pointer-array batch", "cublasGemmBatchedEx_64", [](BlasCallDesc& c) { c.batch = 4; }, "batched (4)", "batch 4"},
      {"alpha", "cublasSgemm_v2_64", [](BlasCallDesc& c) { c.alpha = 2.0; }, "alpha = 2", "m 256 n 96 k 40"},
      {"beta", "cublasSgemm", [](BlasCallDesc& c) { c.beta = 1.0; }, "accumulates into C", "NN"},
      {"device scalars", "cublasGemmEx",
       [](BlasCallDesc& c) { c.pointer_mode = CUBLAS_POINTER_MODE_DEVICE; c.alpha.reset(); c.beta.reset(); },
       "on the device", "compute 32F"},
      {"bf16", "cublasGemmEx", [](BlasCallDesc& c) { c.a_type = c.b_type = c.c_type = CUDA_R_16BF; }, "bf16 data",
       "bf16 m 256"},
      {"fp16 inputs", "cublasSgemmEx", [](BlasCallDesc& c) { c.a_type = c.b_type = CUDA_R_16F; }, "fp16 data",
       "fp16/fp16/fp32"},
      {"empty", "cublasSgemm_v2", [](BlasCallDesc& c) { c.k = 0; }, "empty product", "k 0"},
      {"negative", "cublasSgemm_v2", [](BlasCallDesc& c) { c.m = -3; }, "invalid sizes", "m -3"},
      {"zero ld", "cublasSgemm_v2", [](BlasCallDesc& c) { c.ldb = 0; }, "invalid sizes", "ld 256/0/256"},
  };
  for (const Untunable& u : cases) {
    BlasCallDesc c = row_major_call(problem(96, 256, 40, false, false, MathMode::Fp32), u.api);
    ASSERT_TRUE(blas_call_problem(c).tunable) << u.what;
    u.change(c);
    const GemmCallProblem r = blas_call_problem(c);
    EXPECT_FALSE(r.tunable) << u.what;
    EXPECT_NE(r.reason.find(u.reason_part), std::string::npos) << u.what << ": " << r.reason;
    EXPECT_NE(r.shape.find(u.shape_part), std::string::npos) << u.what << ": " << r.shape;
  }
}

TEST(BlasCallProblem, ALeadingDimensionIsFreeOnlyWhereItNeverSteps) {
  // Y is 1×256 (m = 1): cuBLAS's C is 256×1 and its B 40×1, single columns that read the same at any ld.
  BlasCallDesc c = row_major_call(problem(1, 256, 40, false, false, MathMode::Fp32), "cublasSgemm_v2");
  c.ldb = 64;
  c.ldc = 300;
  GemmCallProblem r = blas_call_problem(c);
  ASSERT_TRUE(r.tunable) << r.reason;
  EXPECT_EQ(r.problem.key(), "fwd:1x256x40:nn:row:none:fp32");
  // Y is 96×1 (n = 1): C is one row of 96 columns, whose ld is the step between them.
  c = row_major_call(problem(96, 1, 40, false, false, MathMode::Fp32), "cublasSgemm_v2");
  c.ldc = 8;
  r = blas_call_problem(c);
  EXPECT_FALSE(r.tunable);
  EXPECT_NE(r.reason.find("leading dimension 8"), std::string::npos) << r.reason;
}

TEST(BlasCallProblem, ABatchOfOneIsAPlainGemm) {
  BlasCallDesc c = row_major_call(problem(96, 256, 40, true, false, MathMode::Tf32), "cublasGemmStridedBatchedEx");
  c.stride_a = c.stride_b = c.stride_c = 12345;
  const GemmCallProblem r = blas_call_problem(c);
  ASSERT_TRUE(r.tunable) << r.reason;
  EXPECT_EQ(r.problem.key(), "fwd:96x256x40:tn:row:none:tf32");
}

TEST(BlasCallDesc, SurvivesAJsonRoundTrip) {
  BlasCallDesc c = row_major_call(problem(96, 256, 40, true, false, MathMode::Tf32), "cublasGemmStridedBatchedEx_64");
  c.batch = 3;
  c.stride_a = 7;
  c.stride_b = -8;
  c.stride_c = 9;
  c.beta.reset();
  const BlasCallDesc back = nlohmann::json(c).get<BlasCallDesc>();
  EXPECT_TRUE(back == c);
}

TEST(BlasCallDesc, ReadingAMalformedDescriptionNamesTheField) {
  nlohmann::json j = row_major_call(problem(8, 8, 8, false, false, MathMode::Fp32), "cublasGemmEx");
  j["ldb"] = "wide";
  try {
    (void)j.get<BlasCallDesc>();
    FAIL() << "a string leading dimension was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("ldb"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gemmtune
