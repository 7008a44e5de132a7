// The tuner's inputs for dropout problems: the offset reaches the kernels through device memory (the form a training
// loop replayed as a CUDA graph uses), so the sweep verifies and times that form; the value form stays available for
// the side-by-side timing (scripts/dev/dropout_offset_bench).
#include "launch/problem_buffers.hpp"

#include <gtest/gtest.h>

#include "cuda/stream.hpp"
#include "kernels/kernel_test_support.hpp"
#include "lt/lt_gemm.hpp"
#include "lt/lt_handles.hpp"
#include "support/gpu_test.hpp"
#include "tuner/verifier.hpp"

namespace gemmtune {
namespace {

constexpr std::size_t kWorkspace = 64u << 20;

GemmProblem dropout_problem() {
  GemmProblem p;
  p.m = p.n = p.k = 256;
  p.epi = Epilogue::parse("bias+gelu+dropout=0.25");
  p.mode = MathMode::Fp32;
  return p;
}

TEST(ProblemBuffers, DropoutProblemsPassTheDropoutOffsetByPointerUnlessAskedForTheValue) {
  GT_REQUIRE_GPU();
  const CudaStream s;
  ProblemBuffers buffers(dropout_problem(), 0, 5, s.get());
  EXPECT_EQ(buffers.dropout_offset_form(), DropoutOffsetForm::Pointer);
  const GemmOperands by_pointer = buffers.operands(0);
  ASSERT_NE(by_pointer.offset_ptr, nullptr);
  EXPECT_EQ(test::to_host(by_pointer.offset_ptr, 1).at(0), buffers.dropout_offset());
  EXPECT_NE(by_pointer.offset, buffers.dropout_offset());  // a kernel that ignored the pointer would draw another mask

  buffers.set_dropout_offset_form(DropoutOffsetForm::Value);
  const GemmOperands by_value = buffers.operands(0);
  EXPECT_EQ(by_value.offset_ptr, nullptr);
  EXPECT_EQ(by_value.offset, buffers.dropout_offset());
  EXPECT_EQ(by_value.seed, by_pointer.seed);

  GemmProblem no_dropout = dropout_problem();
  no_dropout.epi.dropout_p = 0.f;
  EXPECT_EQ(ProblemBuffers(no_dropout, 0, 5, s.get()).operands(0).offset_ptr, nullptr);
}

// cuBLASLt + our epilogue kernel passes in both forms; the same launch with the pointer left out (what a kernel that
// ignored it would compute) draws another mask and fails: the sweep's verification covers the pointer form.
TEST(ProblemBuffers, VerificationPassesBothDropoutOffsetFormsAndCatchesAnIgnoredPointer) {
  GT_REQUIRE_GPU();
  const LtHandle h = make_lt_handle();
  const CudaStream s;
  const GemmProblem p = dropout_problem();
  ProblemBuffers buffers(p, 0, 9, s.get());
  const Verifier verifier(p, buffers, s.get());
  const CandidateLauncher launcher(p, LtGemm(h.get(), p).heuristic(1, kWorkspace).at(0), h.get(), kWorkspace);
  for (DropoutOffsetForm form : {DropoutOffsetForm::Pointer, DropoutOffsetForm::Value}) {
    buffers.set_dropout_offset_form(form);
    const Verdict v = verifier.check(launcher, s.get());
    EXPECT_TRUE(v.ok) << v.message;
  }
  buffers.set_dropout_offset_form(DropoutOffsetForm::Pointer);
  GemmOperands ignored = buffers.operands(0);
  ignored.offset_ptr = nullptr;
  buffers.poison_outputs(s.get());
  launcher.launch(ignored, s.get());
  const Verdict v = verifier.compare(buffers.y(), buffers.z(), s.get());
  EXPECT_FALSE(v.ok) << "error " << v.error;
}

}  // namespace
}  // namespace gemmtune
