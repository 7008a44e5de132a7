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

// ||out - ref||_F / ||ref||_F over count elements, computed on the GPU (fp64 accumulation); returns +inf if any element
// of out is NaN/Inf. Synchronizes s.
double relative_frobenius_error(const float* out, const double* ref, std::int64_t count, cudaStream_t s);

}  // namespace gemmtune::kernels
