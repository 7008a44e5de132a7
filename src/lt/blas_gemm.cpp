#include "lt/blas_gemm.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include "cuda/cuda_call.hpp"
#include "kernels/epilogue_kernel.hpp"
#include "lt/blas_handle.hpp"

namespace gemmtune {

// One cuBLAS handle per device for the process: cublasCreate takes milliseconds and device memory, and a runtime
// holds a launcher per problem. Its stream and workspace are the handle's state, so a call holds the handle's lock
// from setting them until the GEMM is enqueued. Made at first use, after the CUDA runtime started, so the static map
// goes before the runtime's own teardown at exit.
struct detail::SharedBlasHandle {
  std::mutex lock;
  BlasHandle handle;
};

namespace {

using detail::SharedBlasHandle;

SharedBlasHandle& shared_handle() {
  static std::mutex map_lock;
  static std::map<int, SharedBlasHandle> handles;
  int device = 0;
  GT_CUDA_CALL(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> guard(map_lock);
  SharedBlasHandle& h = handles[device];
  if (!h.handle.get()) h.handle = make_blas_handle();
  return h;
}

}  // namespace

std::string BlasGemm::unsupported_reason(const GemmProblem& p) {
  if (p.mode == MathMode::Tf32x3) return "cuBLAS has no 3xtf32 mode (compare against its fp32)";
  if (p.pass != Pass::Forward) return "cuBLAS candidates are enumerated for forward problems only";
  return "";
}

BlasGemm::BlasGemm(const GemmProblem& p) : problem_(p), handle_(nullptr) {
  problem_.validate();
  if (const std::string why = unsupported_reason(problem_); !why.empty()) throw InputError(why);
  handle_ = &shared_handle();
}

void BlasGemm::run(const GemmOperands& x, void* workspace, std::size_t workspace_bytes, cudaStream_t s) const {
  const GemmProblem& p = problem_;
  const bool has_epilogue = !(p.epi == Epilogue{});
  // The GEMM leaves A·B where the epilogue kernel reads it: Z when kept, else Y (in place).
  float* d = has_epilogue && p.epi.save_z ? x.Z : x.Y;
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
  // Column-major views of the row-major operands (lt/lt_gemm.hpp): A is k×m (m×k transposed), B is n×k (k×n).
  const int lda = p.trans_a ? m : k, ldb = p.trans_b ? k : n;
  // torch.mm's call exactly: cublasSgemm, tf32 through the handle's math mode (PyTorch's allow_tf32), not
  // cublasGemmEx's compute type: cuBLAS may pick its kernel by the route a call takes.
  const cublasMath_t math = p.mode == MathMode::Tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
  const float alpha = 1.0f, beta = 0.0f;
  SharedBlasHandle& h = *handle_;
  {
    const std::lock_guard<std::mutex> guard(h.lock);
    GT_BLAS_CALL(cublasSetStream_v2(h.handle.get(), s));
    // After the stream: setting a stream gives the handle back its default workspace.
    const std::size_t bytes = workspace ? std::min(workspace_bytes, kWorkspaceBytes) : 0;
    GT_BLAS_CALL(cublasSetWorkspace_v2(h.handle.get(), workspace, bytes));
    GT_BLAS_CALL(cublasSetMathMode(h.handle.get(), math));
    if (p.out == OutputLayout::RowMajor) {
      // Yᵀ (n×m, ld n) = op(B's view)·op(A's view).
      GT_BLAS_CALL(cublasSgemm_v2(h.handle.get(), p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                  p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, x.B, ldb, x.A, lda, &beta,
                                  d, n));
    } else {
      // Y stored n×m row-major is the column-major m×n product (ld m).
      GT_BLAS_CALL(cublasSgemm_v2(h.handle.get(), p.trans_a ? CUBLAS_OP_N : CUBLAS_OP_T,
                                  p.trans_b ? CUBLAS_OP_N : CUBLAS_OP_T, m, n, k, &alpha, x.A, lda, x.B, ldb, &beta,
                                  d, m));
    }
  }
  if (has_epilogue) kernels::launch_epilogue(p, d, x, s, 0);
}

}  // namespace gemmtune
