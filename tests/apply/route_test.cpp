// The routing rule of `gemmtune apply` (apply/route.hpp), on a CPU: every cuBLAS entry point, each layout, and every
// reason a call must stay with the library; cuBLASLt calls by D's order and epilogue; and which of the call's pointers
// become the runtime's A, B, bias, Y and Z.
#include "apply/route.hpp"

#include <cublasLt.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gemm_shim/blas_call_spec.hpp"
#include "trace/lt_matrix_spec.hpp"

namespace gemmtune::apply {
namespace {

constexpr int N = CUBLAS_OP_N, T = CUBLAS_OP_T;

using test::batched;
using test::call;
using test::col;
using test::row;
using test::with_compute;
using test::with_math;

struct BlasCase {
  BlasCallDesc call;
  std::string expect;  // the routed problem's key, or a part of the reason it passes through
};

// Row-major Y (M×N) = op(X)·op(W) is cuBLAS's C = Yᵀ: m = N, n = M; transa is W's op, transb X's.
std::vector<BlasCase> blas_cases() {
  std::vector<BlasCase> cases = {
      {call("cublasSgemm_v2", N, N, 128, 64, 256, 128, 256, 128), "fwd:64x128x256:nn:row:none:fp32"},
      {call("cublasSgemm_v2", T, N, 96, 40, 24, 24, 24, 96), "fwd:40x96x24:nt:row:none:fp32"},
      {call("cublasSgemm_v2", N, T, 64, 32, 16, 64, 32, 64), "fwd:32x64x16:tn:row:none:fp32"},
      {call("cublasSgemm_v2", T, T, 96, 40, 24, 24, 40, 96), "fwd:40x96x24:tt:row:none:fp32"},
      {call("cublasSgemm_v2_64", N, N, 33, 17, 9, 33, 9, 33), "fwd:17x33x9:nn:row:none:fp32"},
      {with_compute(call("cublasGemmEx", N, N, 33, 17, 9, 33, 9, 33), CUBLAS_COMPUTE_32F),
       "fwd:17x33x9:nn:row:none:fp32"},
      {with_compute(call("cublasGemmEx_64", N, N, 33, 17, 9, 33, 9, 33), CUBLAS_COMPUTE_32F_FAST_TF32),
       "fwd:17x33x9:nn:row:none:tf32"},
      {call("cublasSgemmEx", N, T, 64, 32, 16, 64, 32, 64), "fwd:32x64x16:tn:row:none:fp32"},
      {call("cublasSgemmEx_64", N, T, 64, 32, 16, 64, 32, 64), "fwd:32x64x16:tn:row:none:fp32"},
      {batched(call("cublasSgemmStridedBatched", N, N, 48, 24, 12, 48, 12, 48), 1), "fwd:24x48x12:nn:row:none:fp32"},
      {batched(call("cublasSgemmStridedBatched_64", N, N, 48, 24, 12, 48, 12, 48), 1),
       "fwd:24x48x12:nn:row:none:fp32"},
      {batched(with_compute(call("cublasGemmStridedBatchedEx", N, N, 48, 24, 12, 48, 12, 48), CUBLAS_COMPUTE_32F), 1),
       "fwd:24x48x12:nn:row:none:fp32"},
      {batched(with_compute(call("cublasGemmStridedBatchedEx_64", N, N, 48, 24, 12, 48, 12, 48),
                            CUBLAS_COMPUTE_32F_FAST_TF32),
               1),
       "fwd:24x48x12:nn:row:none:tf32"},
      // TF32 only where the call allowed it: the handle's TF32 math mode, or a FAST_TF32 compute type.
      {with_math(call("cublasSgemm_v2", N, N, 64, 64, 64, 64, 64, 64), CUBLAS_TF32_TENSOR_OP_MATH),
       "fwd:64x64x64:nn:row:none:tf32"},
      {with_math(with_compute(call("cublasGemmEx", N, N, 64, 64, 64, 64, 64, 64), CUBLAS_COMPUTE_32F),
                 CUBLAS_TF32_TENSOR_OP_MATH),
       "fwd:64x64x64:nn:row:none:tf32"},
      {with_math(call("cublasSgemm_v2", N, N, 64, 64, 64, 64, 64, 64), CUBLAS_PEDANTIC_MATH),
       "fwd:64x64x64:nn:row:none:fp32"},
      // Passed through, with the reason.
      {batched(call("cublasSgemmStridedBatched", N, N, 48, 24, 12, 48, 12, 48), 6), "batched (6)"},
      {batched(with_compute(call("cublasGemmStridedBatchedEx_64", N, N, 48, 24, 12, 48, 12, 48), CUBLAS_COMPUTE_32F),
               2),
       "batched (2)"},
      {batched(call("cublasSgemmBatched", N, N, 20, 10, 5, 20, 5, 20), 1), "pointer-array batched"},
      {batched(call("cublasSgemmBatched_64", N, N, 20, 10, 5, 20, 5, 20), 3), "pointer-array batched"},
      {batched(with_compute(call("cublasGemmBatchedEx", N, N, 20, 10, 5, 20, 5, 20), CUBLAS_COMPUTE_32F), 1),
       "pointer-array batched"},
      {batched(with_compute(call("cublasGemmBatchedEx_64", N, N, 20, 10, 5, 20, 5, 20), CUBLAS_COMPUTE_32F), 1),
       "pointer-array batched"},
      {with_math(call("cublasSgemm", N, N, 80, 8, 4, 80, 4, 80), -1), "legacy cuBLAS API"},
      {call("cublasSgemm_v2", N, N, 128, 64, 256, 136, 256, 128), "leading dimension 136"},
      {call("cublasSgemm_v2", N, N, 128, 64, 256, 128, 260, 128), "leading dimension 260"},
      {call("cublasGemmEx", N, N, 128, 64, 256, 128, 256, 130), "leading dimension 130"},
      {with_compute(call("cublasGemmEx", N, N, 64, 64, 64, 64, 64, 64), CUBLAS_COMPUTE_32F_FAST_16BF), "32F_FAST_16BF"},
      {with_compute(call("cublasGemmEx", N, N, 64, 64, 64, 64, 64, 64), CUBLAS_COMPUTE_64F), "compute type 64F"},
      {with_math(call("cublasSgemm_v2", N, N, 64, 64, 64, 64, 64, 64), CUBLAS_TENSOR_OP_MATH), "32F_FAST_16F"},
      {with_math(call("cublasSgemm_v2", N, N, 64, 64, 64, 64, 64, 64), 0x40), "math mode 64"},
      {call("cublasSgemm_v2", N, N, 0, 64, 64, 1, 64, 1), "empty product"},
  };
  BlasCallDesc bf16 = with_compute(call("cublasGemmEx", N, N, 32, 32, 32, 32, 32, 32), CUBLAS_COMPUTE_32F);
  bf16.a_type = bf16.b_type = bf16.c_type = CUDA_R_16BF;
  cases.push_back({bf16, "bf16 data"});
  BlasCallDesc half_out = with_compute(call("cublasGemmEx", N, N, 32, 32, 32, 32, 32, 32), CUBLAS_COMPUTE_32F);
  half_out.c_type = CUDA_R_16F;
  cases.push_back({half_out, "fp16 data"});
  BlasCallDesc scaled = call("cublasSgemm_v2", N, N, 32, 32, 32, 32, 32, 32);
  scaled.alpha = 0.5;
  cases.push_back({scaled, "alpha = 0.5"});
  BlasCallDesc accumulate = call("cublasSgemm_v2", T, T, 32, 32, 32, 32, 32, 32);
  accumulate.beta = 1.0;
  cases.push_back({accumulate, "accumulates into C"});
  BlasCallDesc device = call("cublasSgemm_v2", N, T, 32, 32, 32, 32, 32, 32);
  device.pointer_mode = CUBLAS_POINTER_MODE_DEVICE;
  device.alpha = device.beta = std::nullopt;
  cases.push_back({device, "on the device"});
  return cases;
}

TEST(ApplyRoute, EveryCublasEntryPointRoutesItsFp32ProblemsAndPassesTheRestThroughWithAReason) {
  for (const BlasCase& c : blas_cases()) {
    const Route r = route_blas_call(c.call, ApplyOptions{});
    if (c.expect.rfind("fwd:", 0) == 0) {
      ASSERT_TRUE(r.routed) << c.call.api << ": " << r.reason;
      EXPECT_EQ(r.problem.key(), c.expect) << c.call.api;
      EXPECT_TRUE(r.swap_operands) << c.call.api << ": a column-major call's A is gemmtune's B";
    } else {
      EXPECT_FALSE(r.routed) << c.call.api << " should pass through: " << c.expect;
      EXPECT_NE(r.reason.find(c.expect), std::string::npos) << c.call.api << ": " << r.reason;
      EXPECT_FALSE(r.shape.empty()) << c.call.api;
    }
  }
}

TEST(ApplyRoute, AnFp32CallStaysAnFp32ProblemWithOrWithoutFp32Equivalent) {
  // The runtime decides whether an fp32-equivalent (3xtf32) entry may run it; the problem never becomes tf32/3xtf32.
  const BlasCallDesc c = call("cublasSgemm_v2", N, N, 64, 64, 64, 64, 64, 64);
  for (const bool eq : {false, true}) {
    const Route r = route_blas_call(c, ApplyOptions{eq});
    ASSERT_TRUE(r.routed) << r.reason;
    EXPECT_EQ(r.problem.mode, MathMode::Fp32);
  }
}

TEST(ApplyRoute, APedanticCallPassesThroughOnlyWhenFp32EquivalentIsOn) {
  const BlasCallDesc math = with_math(call("cublasSgemm_v2", N, N, 64, 64, 64, 64, 64, 64), CUBLAS_PEDANTIC_MATH);
  const BlasCallDesc compute =
      with_compute(call("cublasGemmEx", N, N, 64, 64, 64, 64, 64, 64), CUBLAS_COMPUTE_32F_PEDANTIC);
  for (const BlasCallDesc& c : {math, compute}) {
    EXPECT_TRUE(route_blas_call(c, ApplyOptions{false}).routed) << c.api;
    const Route r = route_blas_call(c, ApplyOptions{true});
    EXPECT_FALSE(r.routed) << c.api;
    EXPECT_NE(r.reason.find("32F_PEDANTIC"), std::string::npos) << r.reason;
  }
}

TEST(ApplyRoute, ACublasCallsBIsTheRuntimesAAndItsCIsY) {
  const Route r = route_blas_call(call("cublasSgemm_v2", N, T, 64, 32, 16, 64, 32, 64), ApplyOptions{});
  ASSERT_TRUE(r.routed) << r.reason;
  int a = 0, b = 0, c = 0;
  GemmOperands x;
  std::string why;
  ASSERT_TRUE(routed_operands(r, CallOperands{&a, &b, &c, nullptr, nullptr}, x, why)) << why;
  EXPECT_EQ(static_cast<const void*>(x.A), &b);
  EXPECT_EQ(static_cast<const void*>(x.B), &a);
  EXPECT_EQ(static_cast<void*>(x.Y), &c);
  EXPECT_EQ(x.bias, nullptr);
  EXPECT_EQ(x.Z, nullptr);
}

TEST(ApplyRoute, ANullOperandPassesTheCallThrough) {
  const Route r = route_blas_call(call("cublasSgemm_v2", N, N, 64, 64, 64, 64, 64, 64), ApplyOptions{});
  int a = 0, c = 0;
  GemmOperands x;
  std::string why;
  EXPECT_FALSE(routed_operands(r, CallOperands{&a, nullptr, &c, nullptr, nullptr}, x, why));
  EXPECT_NE(why.find("null"), std::string::npos) << why;
}

TEST(ApplyRoute, AnEntryThatIsCublassOwnChoiceLeavesACublasCallWithCublasButRoutesACublasLtCall) {
  EXPECT_NE(already_the_library("cublasSgemm_v2", "cublas/sgemm").find("cuBLAS's own choice"), std::string::npos);
  EXPECT_FALSE(already_the_library("cublasGemmEx_64", "cublas/sgemm").empty());
  EXPECT_EQ(already_the_library("cublasLtMatmul", "cublas/sgemm"), "");
  EXPECT_EQ(already_the_library("cublasSgemm_v2", "own/tf32_128x128x32_s3"), "");
  EXPECT_EQ(already_the_library("cublasSgemm_v2", "lt/a21-t18-s8-k1-r0-w0-c0-cl0-i0"), "");
}

TEST(ApplyRoute, OnlyAPaddedEntrySavingLessGpuTimeThanItsHostCostOrNotKnownYieldsOnADrainedStreamWithHostYieldOn) {
  const ApplyOptions on{}, off{false, false};
  const std::string padded = "lt/a43-t21-s34-k1-r0-w0-c0-cl8-i0+pad";
  EXPECT_TRUE(yields_when_drained(padded, -1, on));
  EXPECT_TRUE(yields_when_drained(padded, 0, on));
  EXPECT_TRUE(yields_when_drained(padded, kPaddedEntryExtraHostUs - 0.5, on));
  EXPECT_FALSE(yields_when_drained(padded, kPaddedEntryExtraHostUs, on));
  EXPECT_FALSE(yields_when_drained(padded, 40, on));
  EXPECT_FALSE(yields_when_drained(padded, -1, off));
  EXPECT_FALSE(yields_when_drained(padded, 0, off));
  for (const char* id : {"lt/a21-t18-s8-k1-r0-w0-c0-cl0-i0", "lt/a21-t18-s8-k1-r0-w0-c0-cl0-i0+epi", "cublas/sgemm",
                         "own/wgmma_tf32_256x128x32_s4_staged", "own/tf32_128x128x32_s3"})
    for (const double saving : {-1.0, 0.0, 40.0}) EXPECT_FALSE(yields_when_drained(id, saving, on)) << id;
}

// PyTorch's addmm through cuBLASLt: D (n×m, column-major) = op(W)·X ᵀ with the bias per row of D (per column of Y).
LtCallDesc lt_call(std::uint32_t epilogue, bool bias) {
  LtCallDesc c;
  c.compute = CUBLAS_COMPUTE_32F;
  c.scale = CUDA_R_32F;
  c.pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  c.alpha = 1.0;
  c.beta = 0.0;
  c.transa = CUBLAS_OP_T;  // W stored n×k row-major: column-major k×n, read transposed
  c.a = col(48, 40);       // k = 48, n = 40
  c.transb = CUBLAS_OP_N;
  c.b = col(48, 24);       // X stored m×k row-major (m = 24)
  c.c = c.d = col(40, 24);
  c.epilogue = epilogue;
  c.bias = bias;
  return c;
}

TEST(ApplyRoute, ALtCallWithAColumnOrderDRoutesAsYEqualsDTransposedWithItsBias) {
  const Route r = route_lt_call(lt_call(CUBLASLT_EPILOGUE_BIAS, true), ApplyOptions{});
  ASSERT_TRUE(r.routed) << r.reason;
  EXPECT_EQ(r.problem.key(), "fwd:24x40x48:nt:row:bias:fp32");
  EXPECT_TRUE(r.swap_operands);
  int a = 0, b = 0, d = 0, bias = 0;
  GemmOperands x;
  std::string why;
  ASSERT_TRUE(routed_operands(r, CallOperands{&a, &b, &d, &bias, nullptr}, x, why)) << why;
  EXPECT_EQ(static_cast<const void*>(x.A), &b);
  EXPECT_EQ(static_cast<const void*>(x.B), &a);
  EXPECT_EQ(static_cast<const void*>(x.bias), &bias);
  EXPECT_EQ(static_cast<void*>(x.Y), &d);
  EXPECT_FALSE(routed_operands(r, CallOperands{&a, &b, &d, nullptr, nullptr}, x, why));
  EXPECT_NE(why.find("bias"), std::string::npos) << why;
}

TEST(ApplyRoute, ALtCallWithARowOrderDAndNoBiasKeepsItsOperandsInOrder) {
  LtCallDesc c = lt_call(CUBLASLT_EPILOGUE_DEFAULT, false);
  c.transa = CUBLAS_OP_N;
  c.a = row(24, 48);  // A m×k row-major
  c.transb = CUBLAS_OP_N;
  c.b = row(48, 40);  // B k×n row-major
  c.c = c.d = row(24, 40);
  const Route r = route_lt_call(c, ApplyOptions{});
  ASSERT_TRUE(r.routed) << r.reason;
  EXPECT_EQ(r.problem.key(), "fwd:24x40x48:nn:row:none:fp32");
  EXPECT_FALSE(r.swap_operands);
}

TEST(ApplyRoute, ALtGeluAuxCallNeedsItsAuxPointer) {
  LtCallDesc c = lt_call(CUBLASLT_EPILOGUE_GELU_AUX_BIAS, true);
  c.aux = true;
  c.aux_ld = 40;
  const Route r = route_lt_call(c, ApplyOptions{});
  ASSERT_TRUE(r.routed) << r.reason;
  EXPECT_TRUE(r.problem.epi.save_z);
  int a = 0, b = 0, d = 0, bias = 0, aux = 0;
  GemmOperands x;
  std::string why;
  EXPECT_FALSE(routed_operands(r, CallOperands{&a, &b, &d, &bias, nullptr}, x, why));
  ASSERT_TRUE(routed_operands(r, CallOperands{&a, &b, &d, &bias, &aux}, x, why)) << why;
  EXPECT_EQ(static_cast<void*>(x.Z), &aux);
}

TEST(ApplyRoute, LtCallsTheProblemCannotExpressPassThroughWithTheirReason) {
  LtCallDesc scaled = lt_call(CUBLASLT_EPILOGUE_DEFAULT, false);
  scaled.beta = 1.0;
  LtCallDesc device = lt_call(CUBLASLT_EPILOGUE_DEFAULT, false);
  device.alpha = device.beta = std::nullopt;
  LtCallDesc backward = lt_call(CUBLASLT_EPILOGUE_DGELU_BGRAD, false);
  LtCallDesc batch = lt_call(CUBLASLT_EPILOGUE_DEFAULT, false);
  batch.a->batch = batch.b->batch = batch.d->batch = 4;
  LtCallDesc pedantic = lt_call(CUBLASLT_EPILOGUE_DEFAULT, false);
  pedantic.compute = CUBLAS_COMPUTE_32F_PEDANTIC;
  const std::pair<LtCallDesc, std::string> cases[] = {{scaled, "accumulates into C"},
                                                      {device, "on the device"},
                                                      {backward, "DGELU_BGRAD"},
                                                      {batch, "batched (4)"},
                                                      {pedantic, "32F_PEDANTIC"}};
  for (const auto& [c, expect] : cases) {
    const Route r = route_lt_call(c, ApplyOptions{true});
    EXPECT_FALSE(r.routed) << expect;
    EXPECT_NE(r.reason.find(expect), std::string::npos) << r.reason;
  }
}

}  // namespace
}  // namespace gemmtune::apply
