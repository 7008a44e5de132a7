#include "launch/candidate_launcher.hpp"

#include <algorithm>

#include "kernels/registry.hpp"
#include "problem/fp32_equivalent.hpp"
#include "problem/pass_gemm.hpp"

namespace gemmtune {
namespace {

LtEpilogueMode epilogue_mode_of(const Candidate& c) {
  if (c.lt_padded) return LtEpilogueMode::Padded;
  if (c.lt_bias_in_gemm) return LtEpilogueMode::BiasInGemm;
  return c.lt_epilogue_kernel ? LtEpilogueMode::Unfused : LtEpilogueMode::PreferFused;
}

// The GEMM an own variant runs: a 3xtf32 variant computes an fp32 problem as the 3xtf32 problem of the same operands
// (the fp32-equivalent policy; whether it may is the tuner's and the runtime's decision, not the launcher's).
GemmProblem variant_gemm(GemmProblem g, const kernels::KernelVariant& v) {
  if (needs_fp32_equivalent_policy(g, v.mode)) g.mode = v.mode;
  return g;
}

}  // namespace

std::string CandidateLauncher::unsupported_reason(const GemmProblem& p, const Candidate& c, cublasLtHandle_t lt,
                                                  std::size_t max_workspace) {
  const GemmProblem g = pass_gemm(p);
  if (c.backend == Backend::Own) {
    const kernels::KernelVariant* v = kernels::find_kernel_variant(c.own_variant);
    if (!v) return "no kernel variant named '" + c.own_variant + "' in this build";
    const GemmProblem vg = variant_gemm(g, *v);
    if (std::string why = v->unsupported_reason(vg); !why.empty()) return why;
    // A staged variant's copies are scratch of its own, as a padded cuBLASLt candidate's are (padding_floats), which
    // the variant bounds itself (kernels/registry.cu): with them in the workspace, a 92 MB copy of A at
    // 7677x1023x2995 refused every staged variant and left the problem to +pad cuBLASLt's copies of A and B.
    const std::size_t partial_bytes = v->split_k_partial_floats(vg) * sizeof(float);
    if (partial_bytes > max_workspace)
      return "needs " + std::to_string(partial_bytes) + " bytes of split-k scratch, more than the " +
             std::to_string(max_workspace) + "-byte workspace";
    return "";
  }
  if (c.backend == Backend::Blas) return BlasGemm::unsupported_reason(g);
  if (std::string why = LtGemm::unsupported_reason(g); !why.empty()) return why;
  if (c.lt_padded)
    if (std::string why = LtGemm::padding_unsupported_reason(g); !why.empty()) return why;
  if (c.lt_bias_in_gemm)
    if (std::string why = LtGemm::bias_in_gemm_unsupported_reason(g); !why.empty()) return why;
  const LtGemm gemm(lt, g, epilogue_mode_of(c));
  // A candidate stored as fused names an algo for cuBLASLt's own epilogue; it cannot stand in where none exists.
  if (!c.lt_epilogue_kernel && !gemm.fused_epilogue()) return "cuBLASLt has no fused epilogue for this problem";
  return gemm.check(gemm.make_algo(c.lt), max_workspace, nullptr);
}

CandidateLauncher::CandidateLauncher(const GemmProblem& p, const Candidate& c, cublasLtHandle_t lt,
                                     std::size_t max_workspace)
    : CandidateLauncher(p, c, lt, BorrowedWorkspace{nullptr, max_workspace}) {
  if (variant_) return;
  owned_workspace_ = DeviceBuffer<unsigned char>(workspace_needed_);
  workspace_ = BorrowedWorkspace{owned_workspace_.get(), owned_workspace_.size()};
}

CandidateLauncher::CandidateLauncher(const GemmProblem& p, const Candidate& c, cublasLtHandle_t lt,
                                     BorrowedWorkspace workspace)
    : CandidateLauncher(p, c, lt, workspace, true) {}

CandidateLauncher::CandidateLauncher(const GemmProblem& p, const Candidate& c, cublasLtHandle_t lt,
                                     ScratchAtLaunch scratch)
    : CandidateLauncher(p, c, lt, BorrowedWorkspace{nullptr, scratch.workspace_bytes}, false) {}

CandidateLauncher::CandidateLauncher(const GemmProblem& p, const Candidate& c, cublasLtHandle_t lt,
                                     BorrowedWorkspace workspace, bool bind_scratch)
    : problem_(p), gemm_(pass_gemm(p)), candidate_(c), workspace_(workspace) {
  if (const std::string why = unsupported_reason(p, c, lt, workspace.bytes); !why.empty())
    throw InputError("candidate " + c.id() + " cannot run " + p.key() + ": " + why);
  if (c.backend == Backend::Own) {
    variant_ = kernels::find_kernel_variant(c.own_variant);
    variant_gemm_ = variant_gemm(gemm_, *variant_);
    slices_ = variant_->slices_for(variant_gemm_);
    workspace_needed_ = variant_->split_k_partial_floats(variant_gemm_) * sizeof(float);
    needs_scratch_ = variant_->scratch_floats(variant_gemm_) > 0 || variant_->split_k_tickets(variant_gemm_) > 0;
    if (bind_scratch)
      scratch_ = kernels::LaunchScratchBuffer(*variant_, variant_gemm_, static_cast<float*>(workspace.ptr),
                                              workspace.bytes / sizeof(float));
    return;
  }
  if (c.backend == Backend::Blas) {
    blas_.emplace(gemm_);
    // The same workspace in a stream, in a capture and in the sweep: cuBLAS may pick its kernel by the workspace.
    workspace_needed_ = std::min(workspace.bytes, BlasGemm::kWorkspaceBytes);
    return;
  }
  lt_.emplace(lt, gemm_, epilogue_mode_of(c));
  algo_ = lt_->make_algo(c.lt);
  lt_->check(algo_, workspace.bytes, &workspace_needed_);  // unsupported_reason() passed it: this asks for the bytes
  if (bind_scratch && lt_->padding_floats() > 0) {
    padding_ = DeviceBuffer<float>(lt_->padding_floats());
    // Once, and finished before any stream's launch: the copies leave the rows past an operand's own at zero.
    GT_CUDA_CALL(cudaMemset(padding_.get(), 0, padding_.bytes()));
    GT_CUDA_CALL(cudaDeviceSynchronize());
  }
}

void CandidateLauncher::launch(const GemmOperands& x, cudaStream_t s) const {
  if (variant_) {
    kernels::LaunchScratch scratch = scratch_.view();
    scratch.behind_previous_kernel = behind_previous_kernel_;
    variant_->launch(variant_gemm_, x, slices_, scratch, s);
    return;
  }
  if (blas_) {
    blas_->run(x, workspace_.ptr, workspace_.bytes, s);
    return;
  }
  lt_->run(algo_, x, workspace_.ptr, workspace_.bytes, s, padding_.get());
}

void CandidateLauncher::launch(const GemmOperands& x, cudaStream_t s, BorrowedWorkspace workspace, unsigned* tickets,
                               float* padding) const {
  if (variant_) {
    kernels::LaunchScratch scratch =
        needs_scratch_ ? kernels::place_launch_scratch(*variant_, variant_gemm_, static_cast<float*>(workspace.ptr),
                                                       tickets, padding)
                       : kernels::LaunchScratch{};
    scratch.behind_previous_kernel = behind_previous_kernel_;
    variant_->launch(variant_gemm_, x, slices_, scratch, s);
    return;
  }
  if (blas_) {
    blas_->run(x, workspace.ptr, workspace.bytes, s);
    return;
  }
  lt_->run(algo_, x, workspace.ptr, workspace.bytes, s, padding);
}

std::size_t CandidateLauncher::padding_floats() const {
  if (variant_) return variant_->staging_floats(variant_gemm_);
  return lt_ ? lt_->padding_floats() : 0;
}

std::size_t CandidateLauncher::ticket_count() const { return variant_ ? variant_->split_k_tickets(variant_gemm_) : 0; }

}  // namespace gemmtune
