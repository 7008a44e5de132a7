// CandidateLauncher: enqueues one candidate's whole call (every kernel it needs) for one problem.
// The tuner verifies and times through it; `gemmtune run` profiles through it. A launch never allocates or
// synchronizes, so it can be timed back to back and captured in a CUDA graph.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <cuda_runtime_api.h>

#include "cuda/device_buffer.hpp"
#include "lt/lt_gemm.hpp"
#include "problem/candidate.hpp"
#include "problem/gemm_problem.hpp"

namespace gemmtune {

namespace kernels {
struct KernelVariant;
}

class CandidateLauncher {
 public:
  // Why `c` cannot run `p` ("" when it can). For cuBLASLt this rebuilds the algo and asks AlgoCheck.
  static std::string unsupported_reason(const GemmProblem& p, const Candidate& c, cublasLtHandle_t lt,
                                         std::size_t max_workspace);
  // Throws InputError when the candidate cannot run the problem.
  CandidateLauncher(const GemmProblem& p, const Candidate& c, cublasLtHandle_t lt, std::size_t max_workspace);

  void launch(const GemmOperands& x, cudaStream_t s) const;

  const Candidate& candidate() const { return candidate_; }
  const GemmProblem& problem() const { return problem_; }

 private:
  GemmProblem problem_;
  Candidate candidate_;
  const kernels::KernelVariant* variant_ = nullptr;
  std::optional<LtGemm> lt_;
  cublasLtMatmulAlgo_t algo_{};
  DeviceBuffer<unsigned char> workspace_;
};

}  // namespace gemmtune
