#include "kernels/epilogue_kernel.hpp"

#include <algorithm>
#include <cstdint>

#include "cuda/cuda_call.hpp"
#include "kernels/epilogue.cuh"

namespace gemmtune::kernels {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 4096;

// Every thread finishes the elements it reads, and reads all of them before writing any, so acc may alias Y or Z.

// Stored rows whose length is a multiple of 4, 16-byte aligned: a thread owns 4 adjacent stored columns and walks down
// the stored rows, so its position is known without dividing and, row-major, its 4 biases are loaded once. Two rows'
// loads are issued before either is finished, to keep more bytes in flight per thread. The activation is a
// compile-time constant, so no element pays for the switch.
template <Activation kAct>
__global__ void __launch_bounds__(kThreads) epilogue_rows_kernel(EpilogueParams params, const float* acc,
                                                                  std::int64_t acc_row_len) {
  const EpilogueParams e = with_dropout_offset(params);
  const std::int64_t rows = e.transposed ? e.n : e.m, row_len = e.transposed ? e.m : e.n;  // as stored
  const std::int64_t minor = (static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x) * 4;
  if (minor >= row_len) return;
  float4 row_bias = {0.f, 0.f, 0.f, 0.f};
  if (e.bias && !e.transposed) row_bias = __ldg(reinterpret_cast<const float4*>(e.bias + minor));
  const auto finish = [&](std::int64_t major, const float4 in) {
    const float a[4] = {in.x, in.y, in.z, in.w};
    const float column_bias = e.bias && e.transposed ? __ldg(e.bias + major) : 0.f;
    const float b[4] = {row_bias.x + column_bias, row_bias.y + column_bias, row_bias.z + column_bias,
                        row_bias.w + column_bias};
    float y[4], z[4];
#pragma unroll
    for (int v = 0; v < 4; ++v) {
      const std::int64_t row = e.transposed ? minor + v : major, col = e.transposed ? major : minor + v;
      z[v] = a[v] + b[v];
      y[v] = apply_dropout(e, row, col, fast::activation<kAct>(z[v], e.leaky_slope));
    }
    const std::int64_t at = major * row_len + minor;
    *reinterpret_cast<float4*>(e.y + at) = make_float4(y[0], y[1], y[2], y[3]);
    if (e.z) *reinterpret_cast<float4*>(e.z + at) = make_float4(z[0], z[1], z[2], z[3]);
  };
  const std::int64_t step = gridDim.y;
  for (std::int64_t major = blockIdx.y; major < rows; major += 2 * step) {
    const bool second = major + step < rows;
    const float4 in0 = *reinterpret_cast<const float4*>(acc + major * acc_row_len + minor);
    const float4 in1 = second ? *reinterpret_cast<const float4*>(acc + (major + step) * acc_row_len + minor)
                              : float4{0.f, 0.f, 0.f, 0.f};
    finish(major, in0);
    if (second) finish(major + step, in1);
  }
}

// Any shape and alignment: one stored element per thread and step.
__global__ void __launch_bounds__(kThreads) epilogue_elements_kernel(EpilogueParams params, const float* acc,
                                                                      std::int64_t acc_row_len) {
  const EpilogueParams e = with_dropout_offset(params);
  const std::int64_t count = e.m * e.n;
  const std::int64_t row_len = e.transposed ? e.m : e.n;  // length of a stored row
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const std::int64_t major = i / row_len, minor = i - major * row_len;
    const std::int64_t row = e.transposed ? minor : major, col = e.transposed ? major : minor;
    const float z = acc[major * acc_row_len + minor] + (e.bias ? __ldg(e.bias + col) : 0.f);
    const float y = apply_dropout(e, row, col, fast::activation(e.act, z, e.leaky_slope));
    if (e.z) e.z[i] = z;
    e.y[i] = y;
  }
}

bool aligned16(const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; }

}  // namespace

void launch_epilogue(const GemmProblem& p, const float* acc, const GemmOperands& x, cudaStream_t s,
                     std::int64_t acc_row_len) {
  const EpilogueParams e = make_epilogue_params(p, x);
  const std::int64_t rows = e.transposed ? p.n : p.m, row_len = e.transposed ? p.m : p.n;
  if (acc_row_len == 0) acc_row_len = row_len;
  const bool rows_of_vectors = row_len % 4 == 0 && acc_row_len % 4 == 0 && aligned16(acc) && aligned16(e.y) &&
                               (e.z == nullptr || aligned16(e.z)) && (e.bias == nullptr || aligned16(e.bias));
  if (rows_of_vectors) {
    const std::int64_t col_blocks = (row_len / 4 + kThreads - 1) / kThreads;
    const std::int64_t row_blocks = std::max<std::int64_t>(1, std::min(rows, kMaxBlocks / col_blocks));
    const dim3 grid(static_cast<unsigned>(col_blocks), static_cast<unsigned>(row_blocks));
    with_activation(e.act, [&](auto act) {
      epilogue_rows_kernel<decltype(act)::value><<<grid, kThreads, 0, s>>>(e, acc, acc_row_len);
    });
  } else {
    const std::int64_t needed = (p.m * p.n + kThreads - 1) / kThreads;
    epilogue_elements_kernel<<<static_cast<unsigned>(std::min(needed, kMaxBlocks)), kThreads, 0, s>>>(e, acc,
                                                                                                      acc_row_len);
  }
  GT_CUDA_CHECK_LAUNCH();
}

}  // namespace gemmtune::kernels
