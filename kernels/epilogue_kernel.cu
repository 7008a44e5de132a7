#include "kernels/epilogue_kernel.hpp"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cuda/cuda_call.hpp"
#include "kernels/epilogue.cuh"

namespace gemmtune::kernels {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 4096;

// Every thread finishes the elements it reads, and reads all of them before writing any, so acc may alias Y or Z.

// y, dropped out where the launch has dropout: a compile-time switch, so the passes without it (nearly all) carry no
// Philox code and fewer registers (54-63 with it in the rows kernel, which held it to half the H200's threads).
template <bool kDropout>
__device__ __forceinline__ float dropped(const EpilogueParams& e, std::int64_t row, std::int64_t col, float y) {
  if constexpr (kDropout) return apply_dropout(e, row, col, y);
  return y;
}

// kVec adjacent floats, loaded and stored as one access (16 bytes for 4).
template <int kVec>
struct alignas(4 * kVec) Floats {
  float v[kVec];
};

// How many bytes each thread has in flight decides the bandwidth of a pass this thin: every path issues 32 bytes of
// loads per thread before it finishes any of them (PyTorch's elementwise kernels issue 64).
constexpr int kBytesInFlight = 32;

// A thread owns kVec adjacent stored columns and walks down the stored rows, kRows rows' loads at a time, so its
// position is known without dividing and, row-major, its biases are loaded once. A block spans 2^row_shift threads'
// columns and kThreads >> row_shift rows (lanes) at a time, so short rows (a transposed decode output) still fill it;
// a power of two, so a thread finds its lane and column by shifts (three run-time integer divisions did it before,
// ahead of every load). The
// activation is a compile-time constant, so no element pays for the switch. kVec 4 needs rows whose length is a
// multiple of 4 and 16-byte aligned bases; kVec 1 takes any shape and alignment (padded GEMM outputs, misaligned
// bases).
template <Activation kAct, bool kDropout, int kVec>
__global__ void __launch_bounds__(kThreads) epilogue_rows_kernel(EpilogueParams params, const float* acc,
                                                                  std::int64_t acc_row_len, int row_shift) {
  using Vec = Floats<kVec>;
  constexpr int kRows = kBytesInFlight / sizeof(Vec);
  const EpilogueParams e = with_dropout_offset(params);
  const std::int64_t rows = e.transposed ? e.n : e.m, row_len = e.transposed ? e.m : e.n;  // as stored
  const int lanes = kThreads >> row_shift;
  const int lane = static_cast<int>(threadIdx.x) >> row_shift;
  const int in_row = static_cast<int>(threadIdx.x) & ((1 << row_shift) - 1);
  const std::int64_t minor = ((static_cast<std::int64_t>(blockIdx.x) << row_shift) + in_row) * kVec;
  if (minor >= row_len) return;
  Vec row_bias{};
  if (e.bias && !e.transposed) row_bias = *reinterpret_cast<const Vec*>(e.bias + minor);
  const std::int64_t step = static_cast<std::int64_t>(gridDim.y) * lanes;
  for (std::int64_t major = static_cast<std::int64_t>(blockIdx.y) * lanes + lane; major < rows;
       major += kRows * step) {
    Vec in[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      if (major + r * step < rows)
        in[r] = *reinterpret_cast<const Vec*>(acc + (major + r * step) * acc_row_len + minor);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const std::int64_t at_major = major + r * step;
      if (at_major >= rows) break;
      const float column_bias = e.bias && e.transposed ? __ldg(e.bias + at_major) : 0.f;
      Vec y, z;
#pragma unroll
      for (int v = 0; v < kVec; ++v) {
        const std::int64_t row = e.transposed ? minor + v : at_major, col = e.transposed ? at_major : minor + v;
        z.v[v] = in[r].v[v] + row_bias.v[v] + column_bias;
        y.v[v] = dropped<kDropout>(e, row, col, fast::activation<kAct>(z.v[v], e.leaky_slope));
      }
      const std::int64_t at = at_major * row_len + minor;
      *reinterpret_cast<Vec*>(e.y + at) = y;
      if (e.z) *reinterpret_cast<Vec*>(e.z + at) = z;
    }
  }
}

// Where a position (major, minor) of the flat output moves by a fixed number of elements.
struct FlatStep {
  std::int64_t major = 0, minor = 0;  // elements / row_len, elements % row_len
};

__device__ __forceinline__ void advance(std::int64_t& major, std::int64_t& minor, FlatStep by, std::int64_t row_len) {
  major += by.major;
  minor += by.minor;
  if (minor >= row_len) {
    minor -= row_len;
    ++major;
  }
}

// An element's pre-activation z and output y.
struct Finished {
  float z, y;
};

// The element at stored (major, minor) from its accumulator a.
template <Activation kAct, bool kDropout>
__device__ __forceinline__ Finished finish_flat(const EpilogueParams& e, std::int64_t major, std::int64_t minor,
                                                float a) {
  const std::int64_t row = e.transposed ? minor : major, col = e.transposed ? major : minor;
  const float z = a + (e.bias ? __ldg(e.bias + col) : 0.f);
  return {z, dropped<kDropout>(e, row, col, fast::activation<kAct>(z, e.leaky_slope))};
}

// The flat path's float4 accesses per thread in flight.
constexpr int kFlatVectors = kBytesInFlight / 16;

// Contiguous storage whose rows are not a multiple of 4 long (odd widths), 16-byte aligned bases: the output read as
// one flat array, a thread's float4 accesses kThreads vectors apart, as PyTorch's elementwise kernels read it. A
// vector may straddle a row's end, so each element's (major, minor) is stepped from the vector's, and vectors' from
// the thread's first, which alone divides. The last count % 4 elements are one thread's, after the loop, which keeps
// the loop free of per-element bounds (64 registers with them, 48 without). One element per thread with a 64-bit
// division each, as this path was before, ran the H200's 584x10686 bias+gelu in 24.9 us where PyTorch's gelu took
// 11.3; with per-element bounds this kernel took 15.4.
template <Activation kAct, bool kDropout>
__global__ void __launch_bounds__(kThreads) epilogue_flat_kernel(EpilogueParams params, const float* acc,
                                                                  FlatStep lane_step, FlatStep grid_step) {
  constexpr std::int64_t kLaneElements = kThreads * 4;  // lane_step, in elements
  const EpilogueParams e = with_dropout_offset(params);
  const std::int64_t row_len = e.transposed ? e.m : e.n;  // as stored
  const std::int64_t count = e.m * e.n;
  const std::int64_t whole_end = count / 4 * 4;  // the elements whole vectors cover
  const std::int64_t first = (static_cast<std::int64_t>(blockIdx.x) * kThreads * kFlatVectors + threadIdx.x) * 4;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads * kFlatVectors * 4;
  std::int64_t major = first / row_len, minor = first - major * row_len;
  for (std::int64_t base = first; base < whole_end; base += stride) {
    float4 in[kFlatVectors];
#pragma unroll
    for (int u = 0; u < kFlatVectors; ++u) {
      const std::int64_t i = base + u * kLaneElements;
      if (i < whole_end) in[u] = *reinterpret_cast<const float4*>(acc + i);
    }
    std::int64_t vj = major, vn = minor;
#pragma unroll
    for (int u = 0; u < kFlatVectors; ++u) {
      const std::int64_t i = base + u * kLaneElements;
      if (i >= whole_end) break;
      const float a[4] = {in[u].x, in[u].y, in[u].z, in[u].w};
      float y[4], z[4];
      std::int64_t mj = vj, mn = vn;
#pragma unroll
      for (int v = 0; v < 4; ++v) {
        const Finished f = finish_flat<kAct, kDropout>(e, mj, mn, a[v]);
        z[v] = f.z;
        y[v] = f.y;
        for (++mn; mn >= row_len; mn -= row_len) ++mj;
      }
      *reinterpret_cast<float4*>(e.y + i) = make_float4(y[0], y[1], y[2], y[3]);
      if (e.z) *reinterpret_cast<float4*>(e.z + i) = make_float4(z[0], z[1], z[2], z[3]);
      advance(vj, vn, lane_step, row_len);
    }
    advance(major, minor, grid_step, row_len);
  }
  // The last count % 4 elements, by the first thread.
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (std::int64_t i = whole_end; i < count; ++i) {
      const Finished f = finish_flat<kAct, kDropout>(e, i / row_len, i % row_len, acc[i]);
      e.y[i] = f.y;
      if (e.z) e.z[i] = f.z;
    }
}

// The pass where nothing depends on an element's row or column (no bias, no dropout: a `+bias` candidate's gelu after
// cuBLASLt's BIAS epilogue, or an activation alone) over contiguous storage: y = act(acc), z = acc. In PyTorch's
// launch shape for its vectorized elementwise kernels, 128 threads and one block per 128 · 4 · kFlatVectors elements,
// no loop and no position to track. On the H200 gelu took 4.13 us at 632x5120 where the rows kernel took
// 5.02 and PyTorch's gelu 4.61, and was ahead of both on all eight shapes probed (results/nvidia-h200/
// epilogue_probe.txt). With a bias (a column per vector, one float4 load of it each) the same launch shape won at
// 632x5120 and 1206x176 but lost up to 11% at 472x1024, 103x4096 and 1x3072, so those keep the rows kernel.
constexpr int kElementwiseThreads = 128;

template <Activation kAct>
__global__ void __launch_bounds__(kElementwiseThreads)
    epilogue_elementwise_kernel(const float* acc, float* y, float* z, std::int64_t count, float slope) {
  constexpr std::int64_t kLaneElements = kElementwiseThreads * 4;
  const std::int64_t first =
      (static_cast<std::int64_t>(blockIdx.x) * kElementwiseThreads * kFlatVectors + threadIdx.x) * 4;
  float4 in[kFlatVectors];
#pragma unroll
  for (int u = 0; u < kFlatVectors; ++u) {
    const std::int64_t i = first + u * kLaneElements;
    if (i + 4 <= count) in[u] = *reinterpret_cast<const float4*>(acc + i);
  }
#pragma unroll
  for (int u = 0; u < kFlatVectors; ++u) {
    const std::int64_t i = first + u * kLaneElements;
    if (i + 4 <= count) {
      const float4 a = in[u];
      *reinterpret_cast<float4*>(y + i) =
          make_float4(fast::activation<kAct>(a.x, slope), fast::activation<kAct>(a.y, slope),
                      fast::activation<kAct>(a.z, slope), fast::activation<kAct>(a.w, slope));
      if (z && z != acc) *reinterpret_cast<float4*>(z + i) = a;
    } else {
      for (std::int64_t j = i; j < count; ++j) {  // the last count % 4 elements
        const float a = acc[j];
        y[j] = fast::activation<kAct>(a, slope);
        if (z) z[j] = a;
      }
    }
  }
}

bool aligned16(const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; }

// f(activation constant, dropout constant): the kernel instance for e.
template <class F>
void with_kernel_constants(const EpilogueParams& e, F&& f) {
  with_activation(e.act, [&](auto act) {
    if (e.dropout_p > 0.f)
      f(act, std::true_type{});
    else
      f(act, std::false_type{});
  });
}

}  // namespace

void launch_epilogue(const GemmProblem& p, const float* acc, const GemmOperands& x, cudaStream_t s,
                     std::int64_t acc_row_len) {
  const EpilogueParams e = make_epilogue_params(p, x);
  const std::int64_t rows = e.transposed ? p.n : p.m, row_len = e.transposed ? p.m : p.n;
  if (acc_row_len == 0) acc_row_len = row_len;
  const bool outputs_aligned = aligned16(acc) && aligned16(e.y) && (e.z == nullptr || aligned16(e.z));
  const bool rows_of_vectors = row_len % 4 == 0 && acc_row_len % 4 == 0 && outputs_aligned &&
                               (e.bias == nullptr || aligned16(e.bias));
  const auto launch = [&](auto vec) {
    constexpr int kVec = decltype(vec)::value;
    const std::int64_t row_threads = (row_len + kVec - 1) / kVec;
    int row_shift = 5;  // a warp's worth of a row at least, so loads stay whole 128-byte lines
    while ((1 << row_shift) < kThreads && (1 << row_shift) < row_threads) ++row_shift;
    const int threads_per_row = 1 << row_shift, lanes = kThreads >> row_shift;
    const std::int64_t col_blocks = (row_threads + threads_per_row - 1) / threads_per_row;
    // Few enough row blocks that each thread has its kRows rows to load at once: one row per thread left 16 bytes in
    // flight, and the H200's 632x5120 bias+gelu took 9.5 us where PyTorch's gelu takes 4.6.
    const std::int64_t rows_per_block = static_cast<std::int64_t>(lanes) * (kBytesInFlight / (4 * kVec));
    const std::int64_t row_blocks =
        std::max<std::int64_t>(1, std::min((rows + rows_per_block - 1) / rows_per_block, kMaxBlocks / col_blocks));
    const dim3 grid(static_cast<unsigned>(col_blocks), static_cast<unsigned>(row_blocks));
    with_kernel_constants(e, [&](auto act, auto dropout) {
      epilogue_rows_kernel<decltype(act)::value, decltype(dropout)::value, kVec>
          <<<grid, kThreads, 0, s>>>(e, acc, acc_row_len, row_shift);
    });
  };
  const bool flat = acc_row_len == row_len && outputs_aligned;
  if (flat && e.bias == nullptr && e.dropout_p == 0.f) {
    const std::int64_t count = p.m * p.n;
    const std::int64_t per_block = kElementwiseThreads * kFlatVectors * 4;
    const auto blocks = static_cast<unsigned>((count + per_block - 1) / per_block);
    with_activation(e.act, [&](auto act) {
      epilogue_elementwise_kernel<decltype(act)::value>
          <<<blocks, kElementwiseThreads, 0, s>>>(acc, e.y, e.z, count, e.leaky_slope);
    });
  } else if (rows_of_vectors) {
    launch(std::integral_constant<int, 4>{});
  } else if (flat) {
    const std::int64_t per_block = kThreads * kFlatVectors * 4;  // elements
    const std::int64_t blocks = std::min((p.m * p.n + per_block - 1) / per_block, kMaxBlocks);
    const auto step_of = [&](std::int64_t elements) { return FlatStep{elements / row_len, elements % row_len}; };
    with_kernel_constants(e, [&](auto act, auto dropout) {
      epilogue_flat_kernel<decltype(act)::value, decltype(dropout)::value>
          <<<static_cast<unsigned>(blocks), kThreads, 0, s>>>(e, acc, step_of(kThreads * 4),
                                                              step_of(blocks * per_block));
    });
  } else {
    launch(std::integral_constant<int, 1>{});
  }
  GT_CUDA_CHECK_LAUNCH();
}

}  // namespace gemmtune::kernels
