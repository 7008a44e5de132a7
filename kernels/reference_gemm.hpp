// The fp64 reference every candidate is verified against, and the error measure the tolerance applies to.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "problem/gemm_problem.hpp"

namespace gemmtune::kernels {

// fp64 reference of problem p (any pass==Forward problem, all layouts/epilogues) computed on the GPU from the fp32
// inputs in x; writes Y_ref (and Z_ref if p.epi.save_z, else Z_ref may be null) as doubles in p's output layout (same
// element order as x.Y). Asynchronous on stream s.
void reference_gemm(const GemmProblem& p, const GemmOperands& x, double* Y_ref, double* Z_ref, cudaStream_t s);

// How far out lies from ref, over count elements, computed on the GPU (fp64 accumulation).
struct OutputError {
  // ||out − ref||_F / ||ref||_F; +inf if any element of out is NaN/Inf.
  double rel_err = 0;
  // β of out ≈ (1 + β)·ref by least squares: Σ(out − ref)·ref / Σref² (0 where rel_err is not finite). An error of
  // random sign leaves β near rel_err/√count; one that always shrinks (or grows) the sums, as accumulation truncated
  // toward zero does, puts most of rel_err into β. In a training step the first averages out over the elements of a
  // loss and the second does not: a 3xtf32 kernel with the Frobenius error of cuBLAS fp32 moved a 50-step loss 10×
  // as far from fp64 as cuBLAS fp32 did (H200, d_model 4096).
  double scale_bias = 0;
};
// Synchronizes s.
OutputError output_error(const float* out, const double* ref, std::int64_t count, cudaStream_t s);
// output_error(...).rel_err.
double relative_frobenius_error(const float* out, const double* ref, std::int64_t count, cudaStream_t s);

}  // namespace gemmtune::kernels
