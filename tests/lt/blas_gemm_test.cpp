#include "lt/blas_gemm.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda/graph.hpp"
#include "cuda/stream.hpp"
#include "launch/candidate_launcher.hpp"
#include "launch/problem_buffers.hpp"
#include "lt/lt_handles.hpp"
#include "support/gpu_test.hpp"
#include "tuner/verifier.hpp"

namespace gemmtune {
namespace {

constexpr std::size_t kWorkspace = 64u << 20;
constexpr std::size_t kL2 = 50u << 20;

// A forward problem by its key's fields: "127x96x255", "nt", "col", "bias+gelu+z", "tf32".
GemmProblem problem(const std::string& shape, const std::string& layout, const std::string& out,
                    const std::string& epi, const std::string& mode) {
  return GemmProblem::parse_key("fwd:" + shape + ":" + layout + ":" + out + ":" + epi + ":" + mode);
}

Candidate blas() { return Candidate::parse_id("cublas/sgemm"); }

TEST(BlasGemm, NoThreeXTf32ModeAndItSaysSo) {
  EXPECT_NE(BlasGemm::unsupported_reason(problem("64x64x64", "nn", "row", "none", "3xtf32")), "");
  EXPECT_EQ(BlasGemm::unsupported_reason(problem("64x64x64", "nn", "row", "none", "tf32")), "");
}

// Every layout, both output layouts, with and without our epilogue kernel after it, on odd shapes (rows that are not
// 16-byte aligned, which cuBLAS reads in place) and an aligned one: the column-major mapping must give the reference.
TEST(BlasGemm, EveryLayoutAndEpilogueMatchesTheFp64Reference) {
  GT_REQUIRE_GPU();
  const LtHandle h = make_lt_handle();
  CudaStream s;
  int checked = 0;
  for (const char* shape : {"127x96x255", "64x131x77", "256x512x128"})
    for (const char* layout : {"nn", "nt", "tn", "tt"})
      for (const char* out : {"row", "col"})
        for (const char* epi : {"none", "bias+gelu+z", "bias+sigmoid+dropout=0.25"})
          for (const char* mode : {"fp32", "tf32"}) {
            const GemmProblem p = problem(shape, layout, out, epi, mode);
            const ProblemBuffers buffers(p, kL2, 4321 + static_cast<std::uint64_t>(checked), s.get());
            const Verifier verifier(p, buffers, s.get());
            const CandidateLauncher launcher(p, blas(), h.get(), kWorkspace);
            const Verdict v = verifier.check(launcher, s.get());
            EXPECT_TRUE(v.ok) << p.key() << ": " << v.message;
            ++checked;
          }
  EXPECT_EQ(checked, 3 * 4 * 2 * 3 * 2);
}

// The runtime replays calls inside CUDA graphs: the captured call must compute what a stream launch computes, with
// the workspace the runtime lends at launch.
TEST(BlasGemm, ACallCapturedInACudaGraphComputesWhatAStreamLaunchDoes) {
  GT_REQUIRE_GPU();
  const LtHandle h = make_lt_handle();
  CudaStream s;
  const GemmProblem p = problem("1000x1001x257", "nn", "row", "bias+gelu", "tf32");
  const ProblemBuffers buffers(p, kL2, 99, s.get());
  const CandidateLauncher launcher(p, blas(), h.get(), ScratchAtLaunch{kWorkspace});
  DeviceBuffer<unsigned char> workspace(launcher.workspace_needed());
  const BorrowedWorkspace lent{workspace.get(), workspace.size()};
  const GemmOperands x = buffers.operands(0);
  launcher.launch(x, s.get(), lent, nullptr, nullptr);
  GT_CUDA_CALL(cudaStreamSynchronize(s.get()));
  std::vector<float> direct(buffers.y_count()), replayed(buffers.y_count());
  GT_CUDA_CALL(cudaMemcpy(direct.data(), buffers.y(), direct.size() * sizeof(float), cudaMemcpyDeviceToHost));
  buffers.poison_outputs(s.get());
  const CudaGraphExec graph =
      CudaGraphExec::capture(s.get(), [&] { launcher.launch(x, s.get(), lent, nullptr, nullptr); });
  graph.launch(s.get());
  GT_CUDA_CALL(cudaStreamSynchronize(s.get()));
  GT_CUDA_CALL(cudaMemcpy(replayed.data(), buffers.y(), replayed.size() * sizeof(float), cudaMemcpyDeviceToHost));
  EXPECT_EQ(replayed, direct);
}

}  // namespace
}  // namespace gemmtune
