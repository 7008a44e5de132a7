// BlasGemm: one GemmProblem run by cuBLAS's own choice, the cublasSgemm call torch.mm makes (tf32 by the handle's
// math mode, as PyTorch's allow_tf32 sets it), followed by our epilogue kernel wherever the problem has an epilogue.
//
// cuBLAS picks the kernel at every call by heuristics of its own, which are not cuBLASLt's: on the H200's held-out
// shapes PyTorch eager beat cuBLASLt's heuristic-first by up to 28% (576x8192x3072 tf32 bias+gelu: 120 against
// 138 us) where no cuBLASLt heuristic answer, at any workspace, ran that fast (issue 48). So cuBLAS itself is a
// candidate, timed and verified as any other. The operands map as LtGemm's do (lt/lt_gemm.hpp): a row-major Y is
// computed as Yᵀ = Bᵀ·Aᵀ.
#pragma once

#include <cstddef>
#include <string>

#include <cuda_runtime_api.h>

#include "problem/gemm_problem.hpp"

namespace gemmtune {

namespace detail {
struct SharedBlasHandle;  // blas_gemm.cpp: one cuBLAS handle per device, shared by every BlasGemm there
}  // namespace detail

class BlasGemm {
 public:
  // The workspace a call gives cuBLAS: what PyTorch gives it on Hopper (its CUBLAS_WORKSPACE_CONFIG default, 32 MiB),
  // so the kernel cuBLAS picks is the one a PyTorch program gets; less where the caller has less. A runtime gives each
  // call captured into a graph a workspace of its own (runtime/stream_scratch.hpp): 32 MiB per captured call of a
  // problem whose entry is this candidate.
  static constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;

  // Empty when cuBLAS can run p; otherwise why not (no 3xtf32 mode; forward GEMMs only, as cuBLASLt's).
  static std::string unsupported_reason(const GemmProblem& p);

  // Throws InputError where unsupported_reason is not empty. Takes the current device's shared handle (made at the
  // first BlasGemm there), so a call looks nothing up.
  explicit BlasGemm(const GemmProblem& p);

  // Enqueues the GEMM and, where the problem has an epilogue, our epilogue kernel on s, cuBLAS working in
  // min(workspace_bytes, kWorkspaceBytes) of `workspace`, on the device the BlasGemm was made on. No allocation, no
  // synchronization: capturable.
  void run(const GemmOperands& x, void* workspace, std::size_t workspace_bytes, cudaStream_t s) const;

 private:
  GemmProblem problem_;
  detail::SharedBlasHandle* handle_;  // lives as long as the process
};

}  // namespace gemmtune
