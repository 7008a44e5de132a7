#include "tuner/verifier.hpp"

#include <gtest/gtest.h>

#include "cuda/stream.hpp"
#include "support/gpu_test.hpp"

namespace gemmtune {
namespace {

constexpr std::size_t kWorkspace = 64u << 20;

TEST(VerificationTolerance, DependsOnTheMathMode) {
  GemmProblem p;
  p.m = p.n = 64;
  p.k = 4096;
  p.mode = MathMode::Tf32;
  EXPECT_DOUBLE_EQ(verification_tolerance(p), 1e-3);
  p.mode = MathMode::Fp32;
  EXPECT_DOUBLE_EQ(verification_tolerance(p), 64e-6);
  p.mode = MathMode::Tf32x3;
  EXPECT_DOUBLE_EQ(verification_tolerance(p), 64e-6);
}

// A candidate with a plausible bug (it reads B as if it were stored transposed) runs without error on a square
// problem, so only the comparison with the reference can catch it.
TEST(Verifier, CatchesADeliberatelyWrongCandidate) {
  GT_REQUIRE_GPU();
  const LtHandle h = make_lt_handle();
  CudaStream s;
  GemmProblem p;
  p.m = p.n = p.k = 256;
  p.epi = Epilogue::parse("bias+relu");
  p.mode = MathMode::Fp32;
  const ProblemBuffers buffers(p, 50u << 20, 99, s.get());
  const Verifier verifier(p, buffers, s.get());

  const Candidate right = LtGemm(h.get(), p).heuristic(1, kWorkspace).at(0);
  const Verdict ok = verifier.check(CandidateLauncher(p, right, h.get(), kWorkspace), s.get());
  EXPECT_TRUE(ok.ok) << ok.message;
  EXPECT_LT(ok.error, 1e-6);

  GemmProblem wrong_layout = p;
  wrong_layout.trans_b = true;
  const Candidate wrong = LtGemm(h.get(), wrong_layout).heuristic(1, kWorkspace).at(0);
  const Verdict bad = verifier.check(CandidateLauncher(wrong_layout, wrong, h.get(), kWorkspace), s.get());
  EXPECT_FALSE(bad.ok);
  EXPECT_GT(bad.error, 0.1);
  EXPECT_NE(bad.message.find("exceeds tolerance"), std::string::npos);
}

TEST(Verifier, AnOutputElementNeverWrittenFailsVerification) {
  GT_REQUIRE_GPU();
  const LtHandle h = make_lt_handle();
  CudaStream s;
  GemmProblem p;
  p.m = p.n = p.k = 128;
  p.mode = MathMode::Fp32;
  const ProblemBuffers buffers(p, 50u << 20, 7, s.get());
  const Verifier verifier(p, buffers, s.get());
  // A "candidate" that computes only the first 127 rows leaves the poisoned last row as NaN.
  GemmProblem short_problem = p;
  short_problem.m = 127;
  const Candidate c = LtGemm(h.get(), short_problem).heuristic(1, kWorkspace).at(0);
  buffers.poison_outputs(s.get());
  CandidateLauncher(short_problem, c, h.get(), kWorkspace).launch(buffers.operands(0), s.get());
  const Verdict v = verifier.compare(buffers.y(), buffers.z(), s.get());
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.message.find("NaN/Inf or unwritten"), std::string::npos) << v.message;
}

}  // namespace
}  // namespace gemmtune
