#include "kernels/reference_gemm.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "cuda/cuda_call.hpp"
#include "cuda/device_buffer.hpp"
#include "kernels/epilogue.cuh"

namespace gemmtune::kernels {
namespace {

constexpr int kTile = 16;

// Logical element (r, c) of op(M), a rows×cols matrix stored row-major, or stored cols×rows when trans; 0 outside, so
// edge tiles need no other case.
__device__ double load_op(const float* M, bool trans, std::int64_t rows, std::int64_t cols, std::int64_t r,
                          std::int64_t c) {
  if (r >= rows || c >= cols) return 0.0;
  return static_cast<double>(trans ? M[c * rows + r] : M[r * cols + c]);
}

// Shared-memory tiled fp64 GEMM, one output per thread: fast enough for 4096³ (tens of ms) and simple enough to trust.
// Block rows stride over the grid's y so any m fits the 65535 limit.
__global__ void reference_gemm_kernel(EpilogueParams params, const float* A, const float* B, std::int64_t k,
                                      bool trans_a, bool trans_b, double* y_ref, double* z_ref) {
  const EpilogueParams e = with_dropout_offset(params);
  __shared__ double a_tile[kTile][kTile + 1];
  __shared__ double b_tile[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * kTile + tx;
  const std::int64_t row_blocks = (e.m + kTile - 1) / kTile;
  for (std::int64_t block_row = blockIdx.y; block_row < row_blocks; block_row += gridDim.y) {
    const std::int64_t row = block_row * kTile + ty;
    double acc = 0.0;
    for (std::int64_t k0 = 0; k0 < k; k0 += kTile) {
      a_tile[ty][tx] = load_op(A, trans_a, e.m, k, row, k0 + tx);
      b_tile[ty][tx] = load_op(B, trans_b, k, e.n, k0 + ty, col);
      __syncthreads();
      for (int kk = 0; kk < kTile; ++kk) acc = fma(a_tile[ty][kk], b_tile[kk][tx], acc);
      __syncthreads();
    }
    if (row < e.m && col < e.n) {
      const double bias = e.bias ? static_cast<double>(e.bias[col]) : 0.0;
      const EpilogueValues<double> v = epilogue_values<double>(e, row, col, acc, bias);
      const std::int64_t at = output_index(e, row, col);
      if (z_ref) z_ref[at] = v.z;
      y_ref[at] = v.y;
    }
  }
}

constexpr int kErrorThreads = 256;
constexpr int kErrorBlocks = 264;

// Per-block partial sums of (out − ref)², ref², (out − ref)·ref and the count of non-finite outputs; the host adds the
// blocks in a fixed order, so the result does not depend on scheduling.
constexpr int kErrorSums = 4;
__global__ void error_partials_kernel(const float* out, const double* ref, std::int64_t count, double* partials) {
  double sums[kErrorSums] = {0.0, 0.0, 0.0, 0.0};  // diff², ref², diff·ref, non-finite
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const double o = static_cast<double>(out[i]);
    const double r = ref[i];
    if (!isfinite(o)) sums[3] += 1.0;
    sums[0] += (o - r) * (o - r);
    sums[1] += r * r;
    sums[2] += (o - r) * r;
  }
  __shared__ double warp_sums[kErrorThreads / 32][kErrorSums];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int q = 0; q < kErrorSums; ++q) {
    for (int shift = 16; shift > 0; shift /= 2) sums[q] += __shfl_down_sync(0xffffffffu, sums[q], shift);
    if (lane == 0) warp_sums[warp][q] = sums[q];
  }
  __syncthreads();
  if (threadIdx.x < kErrorSums) {
    double sum = 0.0;
    for (int w = 0; w < kErrorThreads / 32; ++w) sum += warp_sums[w][threadIdx.x];
    partials[blockIdx.x * kErrorSums + threadIdx.x] = sum;
  }
}

}  // namespace

void reference_gemm(const GemmProblem& p, const GemmOperands& x, double* Y_ref, double* Z_ref, cudaStream_t s) {
  p.validate();
  if (p.pass != Pass::Forward) throw InputError("reference_gemm: only forward problems, got " + p.key());
  if (p.epi.save_z && !Z_ref) throw InputError("reference_gemm: save_z needs a Z_ref buffer");
  const dim3 block(kTile, kTile);
  const std::int64_t col_blocks = (p.n + kTile - 1) / kTile;
  const std::int64_t row_blocks = (p.m + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(col_blocks), static_cast<unsigned>(row_blocks < 65535 ? row_blocks : 65535));
  reference_gemm_kernel<<<grid, block, 0, s>>>(make_epilogue_params(p, x), x.A, x.B, p.k, p.trans_a, p.trans_b, Y_ref,
                                               p.epi.save_z ? Z_ref : nullptr);
  GT_CUDA_CHECK_LAUNCH();
}

OutputError output_error(const float* out, const double* ref, std::int64_t count, cudaStream_t s) {
  if (count <= 0) throw InputError("output_error: count must be positive");
  DeviceBuffer<double> partials(kErrorSums * kErrorBlocks);
  error_partials_kernel<<<kErrorBlocks, kErrorThreads, 0, s>>>(out, ref, count, partials.get());
  GT_CUDA_CHECK_LAUNCH();
  std::vector<double> host(kErrorSums * kErrorBlocks);
  GT_CUDA_CALL(cudaMemcpyAsync(host.data(), partials.get(), partials.bytes(), cudaMemcpyDeviceToHost, s));
  GT_CUDA_CALL(cudaStreamSynchronize(s));
  double diff2 = 0.0, ref2 = 0.0, diff_ref = 0.0, bad = 0.0;
  for (int b = 0; b < kErrorBlocks; ++b) {
    diff2 += host[kErrorSums * b];
    ref2 += host[kErrorSums * b + 1];
    diff_ref += host[kErrorSums * b + 2];
    bad += host[kErrorSums * b + 3];
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (bad > 0.0) return {kInf, 0.0};
  // An all-zero reference has no scale to be relative to: only an exact match passes.
  if (ref2 == 0.0) return {diff2 == 0.0 ? 0.0 : kInf, 0.0};
  return {std::sqrt(diff2 / ref2), diff_ref / ref2};
}

double relative_frobenius_error(const float* out, const double* ref, std::int64_t count, cudaStream_t s) {
  return output_error(out, ref, count, s).rel_err;
}

}  // namespace gemmtune::kernels
