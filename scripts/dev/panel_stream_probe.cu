// panel_stream_probe: which copy instruction streams a k×512 panel of a row-major k×n matrix into shared memory
// fastest, as the skinny family streams B (issue 49's decode GEMMs, m ≤ 16), for n whose rows start off 16 bytes
// (50257), on 16 bytes (50260) and on 128 bytes (50272), k = 4096: 823 MB read once.
//
//   panel_stream_probe
//
// The grid is the skinny family's at 4×n×4096 in 8×512×16 tiles: a block per 512 columns × 4 slices of k, 256 threads,
// 16 rows a stage, 4 stages, each row copied as the 129 16-byte units from its start rounded down (UnitCursor's raw
// rows). Blocks whose panel reaches the last 4 columns copy nothing, so every variant reads the same bytes. The
// variants differ only in how a unit reaches shared memory: cp.async around L1 (.cg, with and without the zero-fill
// operand, with an L2 prefetch hint of 128 or 256 bytes, a warp per row), cp.async through L1 (.ca), a 16-byte load to
// registers stored a stage later, or a bulk copy (the copy engine) per row. Each call follows a read of 256 MB (the
// L2 cold), is timed by CUDA events, median of 10 after 2; the share is of the H200's nominal 4.8 TB/s.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "cuda/cuda_call.hpp"
#include "cuda/device_buffer.hpp"

namespace {

constexpr int kThreads = 256, kBn = 512, kBk = 16, kStages = 4, kSlices = 4;
constexpr int kUnits = kBn / 4 + 1, kStride = kBn + 8;
constexpr long kK = 4096;

enum Variant { kCgZfill, kCg, kCa, kCgL2x128, kCgL2x256, kCgWarpPerRow, kRegisters, kBulkPerRow, kVariants };
const char* const kNames[] = {"cp.async.cg, zero-fill operand", "cp.async.cg", "cp.async.ca (through L1)",
                              "cp.async.cg L2::128B",           "cp.async.cg L2::256B", "cp.async.cg, a warp per row",
                              "LDG.128 to registers",           "bulk copy per row"};

__device__ unsigned smem(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__device__ const float* row_unit(const float* b, long n, long row, long col0, int u) {
  const auto start = reinterpret_cast<std::uintptr_t>(b + row * n + col0);
  return reinterpret_cast<const float*>(start & ~std::uintptr_t{15}) + 4 * u;
}

template <int kVariant>
__device__ void copy16(float* dst, const float* src) {
  if constexpr (kVariant == kCgZfill)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem(dst)), "l"(src), "r"(16));
  else if constexpr (kVariant == kCa)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" ::"r"(smem(dst)), "l"(src));
  else if constexpr (kVariant == kCgL2x128)
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(smem(dst)), "l"(src));
  else if constexpr (kVariant == kCgL2x256)
    asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;\n" ::"r"(smem(dst)), "l"(src));
  else
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem(dst)), "l"(src));
}

// This block's k tiles [t0, t1); its panel is skipped where it reaches the last 4 columns.
struct Panel {
  long col0;
  int t0, t1;
  bool skipped;
  __device__ Panel(long n)
      : col0(static_cast<long>(blockIdx.x) * kBn),
        t0(static_cast<int>(kK / kBk * blockIdx.y / kSlices)),
        t1(static_cast<int>(kK / kBk * (blockIdx.y + 1) / kSlices)),
        skipped(col0 + kBn + 4 > n) {}
};

// Reads a few floats of each stage, so no copy is dead.
__device__ float consume(const float* stage) {
  float sum = 0.f;
  for (int r = 0; r < kBk; ++r) sum += stage[r * kStride + threadIdx.x * 2];
  return sum;
}

template <int kVariant>
__global__ void __launch_bounds__(kThreads) cp_async_panel(const float* b, long n, float* sink) {
  extern __shared__ float4 shared4[];
  float* const s = reinterpret_cast<float*>(shared4);
  const Panel p(n);
  const auto load = [&](int t) {
    float* const stage = s + t % kStages * kBk * kStride;
    if (p.skipped) return;
    if constexpr (kVariant == kCgWarpPerRow) {
      for (int w = threadIdx.x / 32; w < kBk * 5; w += kThreads / 32) {  // 5 × 32 ≥ 129 units a row
        const int r = w / 5, u = w % 5 * 32 + threadIdx.x % 32;
        if (u < kUnits) copy16<kCg>(stage + r * kStride + 4 * u, row_unit(b, n, long{t} * kBk + r, p.col0, u));
      }
    } else {
      for (int i = threadIdx.x; i < kBk * kUnits; i += kThreads)
        copy16<kVariant>(stage + i / kUnits * kStride + 4 * (i % kUnits),
                         row_unit(b, n, long{t} * kBk + i / kUnits, p.col0, i % kUnits));
    }
  };
  for (int t = p.t0; t < p.t0 + kStages - 1; ++t) {
    if (t < p.t1) load(t);
    asm volatile("cp.async.commit_group;\n" ::);
  }
  float sum = 0.f;
  for (int t = p.t0; t < p.t1; ++t) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 2));
    __syncthreads();
    if (t + kStages - 1 < p.t1) load(t + kStages - 1);
    asm volatile("cp.async.commit_group;\n" ::);
    sum += consume(s + t % kStages * kBk * kStride);
  }
  if (sum == 1.2345f) *sink = sum;
}

__global__ void __launch_bounds__(kThreads) register_panel(const float* b, long n, float* sink) {
  extern __shared__ float4 shared4[];
  float* const s = reinterpret_cast<float*>(shared4);
  const Panel p(n);
  constexpr int kPerThread = (kBk * kUnits + kThreads - 1) / kThreads;
  float4 held[kPerThread];
  const auto fetch = [&](int t) {
#pragma unroll
    for (int c = 0; c < kPerThread; ++c) {
      const int i = threadIdx.x + c * kThreads;
      if (i < kBk * kUnits && !p.skipped)
        held[c] = __ldg(reinterpret_cast<const float4*>(row_unit(b, n, long{t} * kBk + i / kUnits, p.col0, i % kUnits)));
    }
  };
  float sum = 0.f;
  if (p.t0 < p.t1) fetch(p.t0);
  for (int t = p.t0; t < p.t1; ++t) {
    float* const stage = s + t % 2 * kBk * kStride;
#pragma unroll
    for (int c = 0; c < kPerThread; ++c) {
      const int i = threadIdx.x + c * kThreads;
      if (i < kBk * kUnits) *reinterpret_cast<float4*>(stage + i / kUnits * kStride + 4 * (i % kUnits)) = held[c];
    }
    if (t + 1 < p.t1) fetch(t + 1);
    __syncthreads();
    sum += consume(stage);
    __syncthreads();
  }
  if (sum == 1.2345f) *sink = sum;
}

// Lane r < 16 copies row r of a stage with one bulk copy; each stage's mbarrier expects its 16 lanes and their bytes.
__global__ void __launch_bounds__(kThreads) bulk_panel(const float* b, long n, float* sink) {
  extern __shared__ float4 shared4[];
  float* const s = reinterpret_cast<float*>(shared4);
  __shared__ alignas(8) unsigned long long full[kStages];
  const Panel p(n);
  if (threadIdx.x == 0)
    for (auto& barrier : full) asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem(&barrier)), "r"(kBk));
  __syncthreads();
  const auto load = [&](int t) {
    if (threadIdx.x >= kBk) return;
    const float* const start = b + (long{t} * kBk + threadIdx.x) * n + p.col0;
    const int shift = static_cast<int>(reinterpret_cast<std::uintptr_t>(start) >> 2 & 3);
    const unsigned bytes = p.skipped ? 0u : 4u * (kBn + (shift ? 4 : 0)), barrier = smem(&full[t % kStages]);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(barrier), "r"(bytes) : "memory");
    if (bytes)
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                       smem(s + t % kStages * kBk * kStride + threadIdx.x * kStride)),
                   "l"(start - shift), "r"(bytes), "r"(barrier)
                   : "memory");
  };
  for (int t = p.t0; t < p.t0 + kStages - 1 && t < p.t1; ++t) load(t);
  float sum = 0.f;
  for (int t = p.t0; t < p.t1; ++t) {
    const unsigned barrier = smem(&full[t % kStages]), parity = (t - p.t0) / kStages & 1;
    asm volatile("{\n .reg .pred done;\n wait: mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 " @!done bra wait;\n}\n" ::"r"(barrier), "r"(parity) : "memory");
    __syncthreads();  // every thread is done with stage t − 1, which the next load refills
    if (t + kStages - 1 < p.t1) load(t + kStages - 1);
    sum += consume(s + t % kStages * kBk * kStride);
  }
  if (sum == 1.2345f) *sink = sum;
}

__global__ void read_flush(const int4* p, long count, int* sink) {
  int x = 0;
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < count; i += long{gridDim.x} * blockDim.x)
    x ^= p[i].x;
  if (x == 0x1234567) *sink = x;
}

using Kernel = void (*)(const float*, long, float*);

Kernel kernel_of(int v) {
  switch (v) {
    case kCgZfill: return cp_async_panel<kCgZfill>;
    case kCg: return cp_async_panel<kCg>;
    case kCa: return cp_async_panel<kCa>;
    case kCgL2x128: return cp_async_panel<kCgL2x128>;
    case kCgL2x256: return cp_async_panel<kCgL2x256>;
    case kCgWarpPerRow: return cp_async_panel<kCgWarpPerRow>;
    case kRegisters: return register_panel;
    default: return bulk_panel;
  }
}

}  // namespace

int main() {
  try {
    const long widths[] = {50257, 50260, 50272};
    constexpr long kFlushBytes = 256L << 20;
    gemmtune::DeviceBuffer<float> b(static_cast<std::size_t>(50272 * kK + 16));
    gemmtune::DeviceBuffer<int4> flush(kFlushBytes / sizeof(int4));
    gemmtune::DeviceBuffer<float> sink(16);
    GT_CUDA_CALL(cudaMemset(b.get(), 0, b.bytes()));
    GT_CUDA_CALL(cudaMemset(flush.get(), 1, flush.bytes()));
    cudaEvent_t start, stop;
    GT_CUDA_CALL(cudaEventCreate(&start));
    GT_CUDA_CALL(cudaEventCreate(&stop));
    constexpr int kSmemBytes = kStages * kBk * kStride * sizeof(float);
    for (const long n : widths)
      for (int v = 0; v < kVariants; ++v) {
        const Kernel kernel = kernel_of(v);
        GT_CUDA_CALL(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
        const dim3 grid(static_cast<unsigned>((n + kBn - 1) / kBn), kSlices);
        std::vector<float> us;
        for (int call = 0; call < 12; ++call) {
          read_flush<<<1056, 256>>>(flush.get(), kFlushBytes / 16, reinterpret_cast<int*>(sink.get()));
          GT_CUDA_CALL(cudaEventRecord(start));
          kernel<<<grid, kThreads, kSmemBytes>>>(b.get(), n, sink.get());
          GT_CUDA_CHECK_LAUNCH();
          GT_CUDA_CALL(cudaEventRecord(stop));
          GT_CUDA_CALL(cudaEventSynchronize(stop));
          float ms = 0.f;
          GT_CUDA_CALL(cudaEventElapsedTime(&ms, start, stop));
          if (call >= 2) us.push_back(ms * 1000.f);
        }
        std::sort(us.begin(), us.end());
        const double median = us[us.size() / 2];
        std::printf("n=%ld  %-32s %8.1f us  %5.1f%% of 4.8 TB/s\n", n, kNames[v], median,
                    100.0 * n * kK * 4 / (median * 1e-6) / 4.8e12);
      }
    GT_CUDA_CALL(cudaEventDestroy(start));
    GT_CUDA_CALL(cudaEventDestroy(stop));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "panel_stream_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
