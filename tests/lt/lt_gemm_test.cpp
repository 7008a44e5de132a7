#include "lt/lt_gemm.hpp"

#include <gtest/gtest.h>

#include "cuda/stream.hpp"
#include "launch/candidate_launcher.hpp"
#include "launch/problem_buffers.hpp"
#include "support/gpu_test.hpp"
#include "tuner/verifier.hpp"

namespace gemmtune {
namespace {

constexpr std::size_t kWorkspace = 64u << 20;
constexpr std::size_t kL2 = 50u << 20;

GemmProblem make(std::int64_t m, std::int64_t n, std::int64_t k, const char* layout, OutputLayout out,
                 const char* epi, MathMode mode) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.trans_a = layout[0] == 't';
  p.trans_b = layout[1] == 't';
  p.out = out;
  p.epi = Epilogue::parse(epi);
  p.mode = mode;
  return p;
}

TEST(LtGemm, AlgosRebuiltFromTheirStoredFieldsReadBackTheSameFields) {
  GT_REQUIRE_GPU();
  const LtHandle h = make_lt_handle();
  const LtGemm gemm(h.get(), make(1024, 1024, 1024, "nn", OutputLayout::RowMajor, "bias+gelu", MathMode::Tf32));
  const std::vector<Candidate> cands = gemm.heuristic(8, kWorkspace);
  ASSERT_FALSE(cands.empty());
  EXPECT_EQ(cands[0].heuristic_rank, 0);
  for (const Candidate& c : cands) {
    const cublasLtMatmulAlgo_t algo = gemm.make_algo(c.lt);
    EXPECT_EQ(LtGemm::read_algo_fields(algo), c.lt) << c.id();
    EXPECT_EQ(gemm.check(algo, kWorkspace, nullptr), "") << c.id();
  }
}

TEST(LtGemm, NoThreeXTf32ModeAndItSaysSo) {
  EXPECT_NE(LtGemm::unsupported_reason(make(64, 64, 64, "nn", OutputLayout::RowMajor, "none", MathMode::Tf32x3)), "");
}

// Every layout, both output layouts, fused and unfused epilogues: the row-major <-> column-major mapping must give
// the reference result for each, on odd shapes.
TEST(LtGemm, EveryLayoutAndEpilogueMatchesTheFp64Reference) {
  GT_REQUIRE_GPU();
  const LtHandle h = make_lt_handle();
  CudaStream s;
  int checked = 0;
  for (const char* layout : {"nn", "nt", "tn", "tt"})
    for (OutputLayout out : {OutputLayout::RowMajor, OutputLayout::Transposed})
      for (const char* epi : {"none", "bias", "bias+relu", "bias+gelu+z", "gelu", "bias+sigmoid+dropout=0.25", "relu+z"})
        for (MathMode mode : {MathMode::Fp32, MathMode::Tf32}) {
          const GemmProblem p = make(127, 96, 255, layout, out, epi, mode);
          const ProblemBuffers buffers(p, kL2, 1234 + static_cast<std::uint64_t>(checked), s.get());
          const Verifier verifier(p, buffers, s.get());
          const LtGemm gemm(h.get(), p);
          const std::vector<Candidate> cands = gemm.heuristic(1, kWorkspace);
          ASSERT_FALSE(cands.empty()) << p.key();
          const CandidateLauncher launcher(p, cands[0], h.get(), kWorkspace);
          const Verdict v = verifier.check(launcher, s.get());
          EXPECT_TRUE(v.ok) << p.key() << " " << cands[0].id() << ": " << v.message;
          ++checked;
        }
  EXPECT_EQ(checked, 4 * 2 * 7 * 2);
}

// cuBLASLt adds the bias, our kernel the rest: every epilogue with a bias and more, every operand layout, odd shapes
// (n odd too, so the bias is not 16-byte aligned past its first element), both modes, against fp64.
TEST(LtGemm, BiasInGemmMatchesTheFp64ReferenceAndRefusesWhatItCannotSplit) {
  GT_REQUIRE_GPU();
  const LtHandle h = make_lt_handle();
  CudaStream s;
  int checked = 0;
  for (const char* layout : {"nn", "nt", "tn", "tt"})
    for (const char* epi : {"bias+gelu", "bias+relu+z", "bias+gelu+z", "bias+sigmoid+dropout=0.25", "bias+z"})
      for (MathMode mode : {MathMode::Fp32, MathMode::Tf32}) {
        const GemmProblem p = make(127, 97, 255, layout, OutputLayout::RowMajor, epi, mode);
        ASSERT_EQ(LtGemm::bias_in_gemm_unsupported_reason(p), "") << p.key();
        const ProblemBuffers buffers(p, kL2, 4321 + static_cast<std::uint64_t>(checked), s.get());
        const Verifier verifier(p, buffers, s.get());
        const std::vector<Candidate> cands = LtGemm(h.get(), p, LtEpilogueMode::BiasInGemm).heuristic(1, kWorkspace);
        ASSERT_FALSE(cands.empty()) << p.key();
        EXPECT_TRUE(cands[0].lt_bias_in_gemm);
        EXPECT_EQ(cands[0].id().substr(cands[0].id().size() - 5), "+bias");
        const CandidateLauncher launcher(p, cands[0], h.get(), kWorkspace);
        const Verdict v = verifier.check(launcher, s.get());
        EXPECT_TRUE(v.ok) << p.key() << " " << cands[0].id() << ": " << v.message;
        ++checked;
      }
  EXPECT_EQ(checked, 4 * 5 * 2);
  for (const char* epi : {"none", "bias", "gelu"})
    EXPECT_THROW(LtGemm(h.get(), make(64, 64, 64, "nn", OutputLayout::RowMajor, epi, MathMode::Tf32),
                        LtEpilogueMode::BiasInGemm),
                 InputError)
        << epi;
}

// What BiasInGemm refuses needs no GPU: no bias, a bias with nothing after it (cuBLASLt's own BIAS epilogue is the
// whole job), a transposed output (its bias would run along the wrong dimension).
TEST(LtGemm, BiasInGemmNeedsABiasSomethingAfterItAndARowMajorOutput) {
  for (const char* epi : {"none", "bias", "gelu", "relu+z"})
    EXPECT_NE(LtGemm::bias_in_gemm_unsupported_reason(
                  make(64, 64, 64, "nn", OutputLayout::RowMajor, epi, MathMode::Tf32)),
              "")
        << epi;
  EXPECT_NE(LtGemm::bias_in_gemm_unsupported_reason(
                make(64, 64, 64, "nn", OutputLayout::Transposed, "bias+gelu", MathMode::Tf32)),
            "");
  for (const char* epi : {"bias+gelu", "bias+z", "bias+relu+dropout=0.1", "bias+sigmoid+z"})
    EXPECT_EQ(LtGemm::bias_in_gemm_unsupported_reason(
                  make(64, 64, 64, "tn", OutputLayout::RowMajor, epi, MathMode::Fp32)),
              "")
        << epi;
}

}  // namespace
}  // namespace gemmtune
