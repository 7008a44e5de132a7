// The epilogue as its own pass, for GEMMs that cannot fuse ours: a cuBLASLt candidate whose epilogue cuBLASLt lacks
// (dropout, leaky_relu, sigmoid, tanh, gelu_erf), and the "GEMM, then a separate bias+activation kernel" baseline.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "problem/gemm_problem.hpp"

namespace gemmtune::kernels {

// acc holds op(A)·op(B) (no bias) in p's OUTPUT layout; applies the whole epilogue (bias, activation, save_z, dropout)
// and writes x.Y (and x.Z). acc may alias x.Z or x.Y. acc_row_len: how far apart acc's stored rows are (0: Y's row
// length; more for a padded GEMM's output, lt/lt_padding.hpp). Asynchronous on s; no allocation, graph-capturable.
void launch_epilogue(const GemmProblem& p, const float* acc, const GemmOperands& x, cudaStream_t s,
                     std::int64_t acc_row_len = 0);

}  // namespace gemmtune::kernels
