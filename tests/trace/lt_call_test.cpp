#include "trace/lt_call.hpp"

#include <cublasLt.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "trace/lt_matrix_spec.hpp"

namespace gemmtune {
namespace {

using test::col;
using test::row;

std::uint32_t lt_epilogue_of(const Epilogue& e) {
  if (e.act == Activation::Relu) return e.bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  if (e.act == Activation::Gelu && e.save_z) return e.bias ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX;
  if (e.act == Activation::Gelu) return e.bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  return e.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
}

// How a row-major program calls cuBLASLt for p (README "Row-major on cuBLASLt", as src/lt/lt_gemm.cpp builds it):
// Yᵀ (n×m, column-major) = op(B's storage)·op(A's storage), written here independently of the code under test.
LtCallDesc row_major_call(const GemmProblem& p) {
  const auto m = static_cast<std::uint64_t>(p.m), n = static_cast<std::uint64_t>(p.n),
             k = static_cast<std::uint64_t>(p.k);
  LtCallDesc c;
  c.compute = p.mode == MathMode::Tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  c.scale = CUDA_R_32F;
  c.pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  c.alpha = 1.0;
  c.beta = 0.0;
  // B stored row-major k×n is column-major n×k (op N gives n×k); stored n×k (trans_b) it is column-major k×n, op T.
  c.a = p.trans_b ? col(k, n) : col(n, k);
  c.transa = p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  c.b = p.trans_a ? col(m, k) : col(k, m);
  c.transb = p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  c.c = c.d = col(n, m);
  c.epilogue = lt_epilogue_of(p.epi);
  c.bias = p.epi.bias;
  c.aux = p.epi.save_z;
  c.aux_ld = p.epi.save_z ? p.n : 0;
  return c;
}

GemmProblem problem(std::int64_t m, std::int64_t n, std::int64_t k, bool ta, bool tb, const Epilogue& e, MathMode mode) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.trans_a = ta;
  p.trans_b = tb;
  p.epi = e;
  p.mode = mode;
  return p;
}

std::vector<Epilogue> tunable_epilogues() {
  std::vector<Epilogue> out;
  for (bool bias : {false, true})
    for (Activation act : {Activation::None, Activation::Relu, Activation::Gelu})
      for (bool z : {false, true}) {
        if (z && act != Activation::Gelu) continue;  // only GELU_AUX stores Z in cuBLASLt
        Epilogue e;
        e.bias = bias;
        e.act = act;
        e.save_z = z;
        out.push_back(e);
      }
  return out;
}

TEST(LtCallProblem, EveryLayoutEpilogueAndModeOfARowMajorCallMapsBackToItsProblem) {
  int checked = 0;
  for (MathMode mode : {MathMode::Fp32, MathMode::Tf32})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (const Epilogue& e : tunable_epilogues()) {
          // Distinct m, n, k so a swapped dimension cannot go unnoticed.
          const GemmProblem p = problem(96, 256, 40, ta, tb, e, mode);
          const GemmCallProblem r = lt_call_problem(row_major_call(p));
          ASSERT_TRUE(r.tunable) << p.key() << ": " << r.reason;
          EXPECT_EQ(r.problem.key(), p.key());
          ++checked;
        }
  EXPECT_EQ(checked, 2 * 4 * 8);
}

TEST(LtCallProblem, PyTorchLinearWithBiasIsAnNtProblemWithBias) {
  // F.linear(x[64×128], W[256×128], b): cuBLASLt D (256×64) = Wᵀ-view op T · xᵀ-view, epilogue BIAS, tf32.
  LtCallDesc c;
  c.compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  c.transa = CUBLAS_OP_T;
  c.transb = CUBLAS_OP_N;
  c.a = col(128, 256);
  c.b = col(128, 64);
  c.c = c.d = col(256, 64);
  c.epilogue = CUBLASLT_EPILOGUE_BIAS;
  c.bias = true;
  c.alpha = 1.0;
  c.beta = 0.0;
  const GemmCallProblem r = lt_call_problem(c);
  ASSERT_TRUE(r.tunable) << r.reason;
  EXPECT_EQ(r.problem.key(), "fwd:64x256x128:nt:row:bias:tf32");
  EXPECT_EQ(r.shape, "64x256x128 nt tf32 bias");
}

TEST(LtCallProblem, AColumnMajorCallWithoutSwapIsReadAsTheEquivalentTransposedProduct) {
  // Our lt candidates' transposed store runs D (m×n column-major) = op(A)·op(B) directly; read back it is
  // Yᵀ = Bᵀ·Aᵀ: the n×m×k row-major problem with the operands' roles and transposes swapped.
  LtCallDesc c;
  c.compute = CUBLAS_COMPUTE_32F;
  c.transa = CUBLAS_OP_T;  // A row-major m×k is column-major k×m
  c.transb = CUBLAS_OP_T;  // B row-major k×n is column-major n×k
  c.a = col(40, 96);
  c.b = col(256, 40);
  c.c = c.d = col(96, 256);
  c.alpha = 1.0;
  c.beta = 0.0;
  const GemmCallProblem r = lt_call_problem(c);
  ASSERT_TRUE(r.tunable) << r.reason;
  EXPECT_EQ(r.problem.key(), "fwd:256x96x40:tt:row:none:fp32");
}

TEST(LtCallProblem, RowOrderMatricesAreRowMajorOperandsDirectly) {
  LtCallDesc c;
  c.compute = CUBLAS_COMPUTE_32F;
  c.a = row(96, 40);   // A: m×k row-major, op N
  c.b = row(256, 40);  // B stored n×k row-major, op T: trans_b
  c.transb = CUBLAS_OP_T;
  c.c = c.d = row(96, 256);
  c.alpha = 1.0;
  c.beta = 0.0;
  const GemmCallProblem r = lt_call_problem(c);
  ASSERT_TRUE(r.tunable) << r.reason;
  EXPECT_EQ(r.problem.key(), "fwd:96x256x40:nt:row:none:fp32");
}

TEST(LtCallProblem, ARowOrderCallWithBiasIsTheTransposedStoreOfTheSwappedProduct) {
  // cuBLASLt's bias runs along D's rows; gemmtune's runs along Y's columns, so Y = Dᵀ stored transposed.
  LtCallDesc c;
  c.compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  c.a = row(96, 40);
  c.b = row(40, 256);
  c.c = c.d = row(96, 256);
  c.epilogue = CUBLASLT_EPILOGUE_RELU_BIAS;
  c.bias = true;
  c.alpha = 1.0;
  c.beta = 0.0;
  const GemmCallProblem r = lt_call_problem(c);
  ASSERT_TRUE(r.tunable) << r.reason;
  // gemmtune A = op(B)ᵀ (256×40, stored 40×256 row-major: transposed), B = op(A)ᵀ (40×96, stored 96×40: transposed).
  EXPECT_EQ(r.problem.key(), "fwd:256x96x40:tt:col:bias+relu:tf32");
}

struct Untunable {
  const char* what;
  void (*change)(LtCallDesc&);
  const char* reason_part;
};

TEST(LtCallProblem, CallsOutsideTheProblemModelAreListedWithTheirReason) {
  const Untunable cases[] = {
      {"bf16", [](LtCallDesc& c) { c.a->type = c.b->type = c.c->type = c.d->type = CUDA_R_16BF; }, "bf16 data"},
      {"fp16", [](LtCallDesc& c) { c.a->type = c.b->type = c.c->type = c.d->type = CUDA_R_16F; }, "fp16 data"},
      {"fp8", [](LtCallDesc& c) { c.a->type = c.b->type = CUDA_R_8F_E4M3; }, "fp8e4m3 data"},
      {"batched", [](LtCallDesc& c) { c.a->batch = c.b->batch = c.c->batch = c.d->batch = 8; }, "batched (8)"},
      {"fast bf16 compute", [](LtCallDesc& c) { c.compute = CUBLAS_COMPUTE_32F_FAST_16BF; }, "compute type"},
      {"alpha", [](LtCallDesc& c) { c.alpha = 0.5; }, "alpha = 0.5"},
      {"beta", [](LtCallDesc& c) { c.beta = 1.0; }, "accumulates into C"},
      {"device scalars", [](LtCallDesc& c) { c.alpha.reset(); }, "on the device"},
      {"relu aux", [](LtCallDesc& c) { c.epilogue = CUBLASLT_EPILOGUE_RELU_AUX_BIAS; c.bias = true; }, "RELU_AUX_BIAS"},
      {"drelu bgrad", [](LtCallDesc& c) { c.epilogue = CUBLASLT_EPILOGUE_DRELU_BGRAD; }, "DRELU_BGRAD"},
      {"dgelu", [](LtCallDesc& c) { c.epilogue = CUBLASLT_EPILOGUE_DGELU; }, "DGELU"},
      {"bgradb", [](LtCallDesc& c) { c.epilogue = CUBLASLT_EPILOGUE_BGRADB; }, "BGRADB"},
      {"bias without pointer", [](LtCallDesc& c) { c.epilogue = CUBLASLT_EPILOGUE_BIAS; }, "without a bias pointer"},
      {"bf16 bias", [](LtCallDesc& c) { c.epilogue = CUBLASLT_EPILOGUE_BIAS; c.bias = true; c.bias_type = CUDA_R_16BF; }, "bf16 bias"},
      {"padded ld", [](LtCallDesc& c) { c.a->ld += 4; }, "leading dimension"},
      {"shapes", [](LtCallDesc& c) { c.b->rows += 1; }, "do not multiply"},
      {"no layout", [](LtCallDesc& c) { c.b.reset(); }, "could not read"},
      {"tiled order", [](LtCallDesc& c) { c.a->order = CUBLASLT_ORDER_COL32; }, "tiled matrix order"},
      {"aux ld", [](LtCallDesc& c) { c.epilogue = CUBLASLT_EPILOGUE_GELU_AUX; c.aux = true; c.aux_ld = 300; }, "aux leading dimension"},
  };
  for (const Untunable& u : cases) {
    LtCallDesc c = row_major_call(problem(96, 256, 40, false, false, Epilogue{}, MathMode::Fp32));
    ASSERT_TRUE(lt_call_problem(c).tunable);
    u.change(c);
    const GemmCallProblem r = lt_call_problem(c);
    EXPECT_FALSE(r.tunable) << u.what;
    EXPECT_NE(r.reason.find(u.reason_part), std::string::npos) << u.what << ": " << r.reason;
    EXPECT_FALSE(r.shape.empty()) << u.what;
  }
}

TEST(LtCallDesc, SurvivesAJsonRoundTrip) {
  LtCallDesc c = row_major_call(problem(96, 256, 40, true, false, Epilogue::parse("bias+gelu+z"), MathMode::Tf32));
  c.beta.reset();
  const LtCallDesc back = nlohmann::json(c).get<LtCallDesc>();
  EXPECT_TRUE(back == c);
}

TEST(LtCallDesc, ReadingAMalformedDescriptionNamesTheField) {
  nlohmann::json j = row_major_call(problem(8, 8, 8, false, false, Epilogue{}, MathMode::Fp32));
  j["a"]["rows"] = "many";
  try {
    (void)j.get<LtCallDesc>();
    FAIL() << "a string row count was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a.rows"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gemmtune
