// CandidateLauncher: enqueues one candidate's whole call (every kernel it needs) for one problem.
// The tuner verifies and times through it, the runtime runs each GEMM through it, `gemmtune run` profiles through it.
// A launch never allocates or synchronizes, so it can be timed back to back and captured in a CUDA graph.
// A backward problem (Pass::GradA/GradB) runs as its plain GEMM (problem/pass_gemm.hpp): candidates, support checks
// and operands are those of pass_gemm(p), while problem() stays the case that was asked for (its NVTX range, its key).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <cuda_runtime_api.h>

#include "cuda/device_buffer.hpp"
#include "kernels/launch_scratch.hpp"
#include "lt/blas_gemm.hpp"
#include "lt/lt_gemm.hpp"
#include "problem/candidate.hpp"
#include "problem/gemm_problem.hpp"

namespace gemmtune {

namespace kernels {
struct KernelVariant;
}

// Device memory a launcher borrows for cuBLASLt (or for our split-k variants' partial tiles) instead of allocating its
// own: the runtime shares one workspace across all its plans, so a captured graph keeps pointing at memory that lives
// as long as the runtime.
struct BorrowedWorkspace {
  void* ptr = nullptr;
  std::size_t bytes = 0;
};

// A launcher whose scratch (workspace, split-k tickets, a padded or staged candidate's copies) is the caller's at each
// launch, the workspace of workspace_bytes at most: the runtime keeps scratch per stream, so one launcher serves calls
// on several streams at once.
struct ScratchAtLaunch {
  std::size_t workspace_bytes = 0;
};

class CandidateLauncher {
 public:
  // Why `c` cannot run `p` ("" when it can). For cuBLASLt this rebuilds the algo and asks AlgoCheck.
  static std::string unsupported_reason(const GemmProblem& p, const Candidate& c, cublasLtHandle_t lt,
                                         std::size_t max_workspace);
  // Throws InputError when the candidate cannot run the problem. Allocates the workspace the candidate needs.
  CandidateLauncher(const GemmProblem& p, const Candidate& c, cublasLtHandle_t lt, std::size_t max_workspace);
  // The same, running in `workspace` (which must outlive the launcher); the algo must fit in workspace.bytes.
  CandidateLauncher(const GemmProblem& p, const Candidate& c, cublasLtHandle_t lt, BorrowedWorkspace workspace);
  // The same, launched only with scratch of the caller's (the second launch()).
  CandidateLauncher(const GemmProblem& p, const Candidate& c, cublasLtHandle_t lt, ScratchAtLaunch scratch);

  // Our kernels (where their family allows it) start behind the kernel before them on the stream
  // (kernels::LaunchScratch::behind_previous_kernel): what a program's calls run. Off by default, for CUPTI's times.
  void set_behind_previous_kernel(bool on) { behind_previous_kernel_ = on; }

  void launch(const GemmOperands& x, cudaStream_t s) const;
  // The same with scratch of the caller's at this launch. `workspace` must hold what the launcher was checked for (its
  // constructor's workspace bytes); `tickets`, ticket_count() of them, and `padding`, padding_floats() of them, zero
  // before a stream's first launch.
  void launch(const GemmOperands& x, cudaStream_t s, BorrowedWorkspace workspace, unsigned* tickets,
              float* padding) const;
  // How many split-k tickets a launch needs (0: none), and how much workspace: what the cuBLASLt algo asks for, what
  // cuBLAS is given (BlasGemm::kWorkspaceBytes at most), or our variant's split-k partials.
  std::size_t ticket_count() const;
  std::size_t workspace_needed() const { return workspace_needed_; }
  // A padded cuBLASLt candidate's copies and padded output (lt/lt_padding.hpp), or a staged variant's copies
  // (kernels/operand_staging.hpp), in floats; 0 for any other.
  std::size_t padding_floats() const;

  const Candidate& candidate() const { return candidate_; }
  const GemmProblem& problem() const { return problem_; }
  // What launch() runs: pass_gemm(problem()). Its operands are what launch() takes.
  const GemmProblem& gemm() const { return gemm_; }

 private:
  CandidateLauncher(const GemmProblem& p, const Candidate& c, cublasLtHandle_t lt, BorrowedWorkspace workspace,
                    bool bind_scratch);

  GemmProblem problem_;
  GemmProblem gemm_;
  // What an own variant launches: gemm_, in the variant's mode (problem/fp32_equivalent.hpp).
  GemmProblem variant_gemm_;
  Candidate candidate_;
  const kernels::KernelVariant* variant_ = nullptr;
  int slices_ = 1;  // variant_->slices_for(variant_gemm_), worked out once rather than at every launch
  std::optional<LtGemm> lt_;
  std::optional<BlasGemm> blas_;
  cublasLtMatmulAlgo_t algo_{};
  DeviceBuffer<unsigned char> owned_workspace_;
  BorrowedWorkspace workspace_;
  // A split variant's tickets are its own (two launchers never share them); its partials use the workspace.
  kernels::LaunchScratchBuffer scratch_;  // empty for ScratchAtLaunch
  DeviceBuffer<float> padding_;           // a padded candidate's, zeroed once; empty for ScratchAtLaunch
  bool needs_scratch_ = false;  // an own variant with partials, staged copies or tickets
  bool behind_previous_kernel_ = false;
  std::size_t workspace_needed_ = 0;
};

}  // namespace gemmtune
