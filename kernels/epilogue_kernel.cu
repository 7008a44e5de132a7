#include "kernels/epilogue_kernel.hpp"

#include <cstdint>
#include <type_traits>

#include "cuda/cuda_call.hpp"
#include "kernels/epilogue.cuh"

namespace gemmtune::kernels {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 4096;

// Each thread finishes kVec consecutive STORED elements per step (16-byte loads and stores when kVec == 4). It reads
// all of its acc values before writing any, and no other thread touches them, so acc may alias Y or Z.
template <int kVec>
__global__ void __launch_bounds__(kThreads) epilogue_kernel(EpilogueParams e, const float* acc) {
  using Vec = std::conditional_t<kVec == 4, float4, float>;
  const std::int64_t count = e.m * e.n;
  const std::int64_t stored_rows_len = e.transposed ? e.m : e.n;  // length of a stored row
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x * kVec;
  for (std::int64_t first = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kVec; first < count;
       first += stride) {
    float in[kVec], y[kVec], z[kVec];
    const bool full = first + kVec <= count;
    if (full) {
      *reinterpret_cast<Vec*>(in) = *reinterpret_cast<const Vec*>(acc + first);
    } else {
      for (int v = 0; v < kVec; ++v) in[v] = first + v < count ? acc[first + v] : 0.f;
    }
    std::int64_t major = first / stored_rows_len;
    std::int64_t minor = first - major * stored_rows_len;
    for (int v = 0; v < kVec; ++v) {
      const std::int64_t row = e.transposed ? minor : major;
      const std::int64_t col = e.transposed ? major : minor;
      const float bias = e.bias ? __ldg(e.bias + col) : 0.f;
      const EpilogueValues<float> out = epilogue_values<float>(e, row, col, in[v], bias);
      y[v] = out.y;
      z[v] = out.z;
      if (++minor == stored_rows_len) {
        minor = 0;
        ++major;
      }
    }
    if (full) {
      *reinterpret_cast<Vec*>(e.y + first) = *reinterpret_cast<const Vec*>(y);
      if (e.z) *reinterpret_cast<Vec*>(e.z + first) = *reinterpret_cast<const Vec*>(z);
    } else {
      for (int v = 0; v < kVec && first + v < count; ++v) {
        e.y[first + v] = y[v];
        if (e.z) e.z[first + v] = z[v];
      }
    }
  }
}

bool aligned16(const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; }

}  // namespace

void launch_epilogue(const GemmProblem& p, const float* acc, const GemmOperands& x, cudaStream_t s) {
  const EpilogueParams e = make_epilogue_params(p, x);
  const std::int64_t count = p.m * p.n;
  const bool vectorized = aligned16(acc) && aligned16(e.y) && (e.z == nullptr || aligned16(e.z));
  const int vec = vectorized ? 4 : 1;
  const std::int64_t needed = (count + std::int64_t{kThreads} * vec - 1) / (std::int64_t{kThreads} * vec);
  const auto blocks = static_cast<unsigned>(needed < kMaxBlocks ? needed : kMaxBlocks);
  if (vectorized)
    epilogue_kernel<4><<<blocks, kThreads, 0, s>>>(e, acc);
  else
    epilogue_kernel<1><<<blocks, kThreads, 0, s>>>(e, acc);
  GT_CUDA_CHECK_LAUNCH();
}

}  // namespace gemmtune::kernels
