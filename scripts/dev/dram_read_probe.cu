// dram_read_probe: how fast one kernel can read a weight of a given size once from a cold L2, against issue 49's decode
// target (a GEMM with m <= 16 must stream its k x n weight, L2 flushed before every call, at >= 80% of the nominal
// DRAM bandwidth). A decode GEMM reads at least those bytes, so this probe's best time is a floor for it as far as
// this probe's reading is the best there is; a GEMM that streams the same bytes faster shows the floor lies lower.
// It does: its loads go around L1, and the skinny GEMMs that copy B through L1 beat it (85.4% of 4.8 TB/s at 322 MB
// against its 79.6%; panel_stream_probe.cu compares the copy instructions).
//
//   dram_read_probe [--flush read|memset] MB...
//       default sizes 82 98 308: issue 49's three weights (4096x5003, 3001x8192, 11081x6953 floats)
//
// Per size, load hint (Hint below) and launch shape (grid-stride or one slab per block; blocks per SM x 256 threads;
// float4 loads in flight per thread before any is used), the kernel sums its part of the buffer with 16-byte loads
// that bypass L1 and writes one float per block, so no load is dead. Each call follows an L2 flush and is timed alone
// by CUPTI (cupti/cupti_kernel_timer.hpp); the median of 30 calls. Two flushes: reads of 2x L2 (cupti/l2_flush.hpp,
// which leaves clean lines) and a memset of 2x L2, which leaves dirty lines that the next kernel's misses write back
// (what `gemmtune sweep` issued before its read flush); --flush picks one. Per size the best shape, its bandwidth and
// its share of the nominal (memory clock x bus width).
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "cuda/cuda_call.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/device_info.hpp"
#include "cuda/stream.hpp"
#include "cupti/cupti_kernel_timer.hpp"
#include "cupti/l2_flush.hpp"

namespace gemmtune {
namespace {

constexpr int kThreads = 256, kCalls = 30;

// How a load asks the memory system for its 16 bytes: plainly, or with an L2 prefetch of the 256-byte block around
// them (fewer, larger DRAM requests for a stream), or that and an evict-first policy (the stream's lines are the first
// the L2 replaces, not the lines that were there before it, such as a flush's dirty ones).
enum Hint { kPlain, kPrefetch256, kPrefetch256EvictFirst };
constexpr const char* kHintNames[] = {"plain", "L2::256B", "L2::256B+evict_first"};

template <int kHint>
__device__ __forceinline__ float4 load_streaming(const float4* p, std::uint64_t policy) {
  float4 v;
  if constexpr (kHint == kPlain) {
    asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
  } else if constexpr (kHint == kPrefetch256) {
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
  } else {
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p), "l"(policy));
  }
  return v;
}

__device__ __forceinline__ std::uint64_t evict_first_policy() {
  std::uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// Sums n float4s, kInFlight loads issued before their sum. Grid-stride (kSlab false): thread t of the grid reads t,
// t + stride, ... with stride the grid's thread count. Slab: each block reads one contiguous n / blocks of them.
template <int kInFlight, int kHint, bool kSlab>
__global__ void __launch_bounds__(kThreads) read_kernel(const float4* __restrict__ src, std::size_t n, float* sink) {
  const std::uint64_t policy = kHint == kPrefetch256EvictFirst ? evict_first_policy() : 0;
  const std::size_t per_block = (n + gridDim.x - 1) / gridDim.x;
  const std::size_t slab = std::size_t{blockIdx.x} * per_block;
  const std::size_t step = kSlab ? kThreads : std::size_t{gridDim.x} * kThreads;
  const std::size_t end = !kSlab ? n : slab + per_block < n ? slab + per_block : n;
  std::size_t i = (kSlab ? slab : std::size_t{blockIdx.x} * kThreads) + threadIdx.x;
  float sum = 0.f;
  for (; i + (kInFlight - 1) * step < end; i += kInFlight * step) {
    float4 v[kInFlight];
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) v[j] = load_streaming<kHint>(src + i + j * step, policy);
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) sum += v[j].x + v[j].y + v[j].z + v[j].w;
  }
  for (; i < end; i += step) {
    const float4 v = load_streaming<kHint>(src + i, policy);
    sum += v.x + v.y + v.z + v.w;
  }
  __shared__ float block_sum;
  if (threadIdx.x == 0) block_sum = 0.f;
  __syncthreads();
  atomicAdd(&block_sum, sum);
  __syncthreads();
  if (threadIdx.x == 0) sink[blockIdx.x] = block_sum;
}

using ReadKernel = void (*)(const float4*, std::size_t, float*);

struct Shape {
  int blocks_per_sm;
  int in_flight;
  ReadKernel kernel;
  const char* walk;
  int hint;
};

// The launch shapes tried with one hint.
template <int H>
std::vector<Shape> shapes_with_hint() {
  return {{2, 4, read_kernel<4, H, false>, "grid-stride", H},   {4, 4, read_kernel<4, H, false>, "grid-stride", H},
          {8, 4, read_kernel<4, H, false>, "grid-stride", H},   {4, 8, read_kernel<8, H, false>, "grid-stride", H},
          {4, 16, read_kernel<16, H, false>, "grid-stride", H}, {4, 4, read_kernel<4, H, true>, "slab per block", H},
          {4, 8, read_kernel<8, H, true>, "slab per block", H}, {8, 8, read_kernel<8, H, true>, "slab per block", H}};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// An L2 flush as the sweep's measurement loop issues it (tuner/measurement_loop.cpp), or as cupti/l2_flush.hpp does.
struct Flush {
  const L2Flush* reads = nullptr;
  const DeviceBuffer<unsigned char>* memset = nullptr;
  const char* name;
  void run(int call, cudaStream_t s) const {
    if (reads) return reads->run(s);
    GT_CUDA_CALL(cudaMemsetAsync(memset->get(), call & 0xff, memset->size(), s));
  }
};

void probe(double mb, const DeviceInfo& device, int sms, const Flush& flush, CuptiKernelTimer& timer,
           cudaStream_t s) {
  const std::size_t n = static_cast<std::size_t>(mb * 1e6 / 16);
  const DeviceBuffer<float4> src(n);
  GT_CUDA_CALL(cudaMemsetAsync(src.get(), 0x3c, n * sizeof(float4), s));  // 0.0115f: finite sums
  std::vector<Shape> shapes = shapes_with_hint<kPlain>();
  for (const std::vector<Shape>& more : {shapes_with_hint<kPrefetch256>(), shapes_with_hint<kPrefetch256EvictFirst>()})
    shapes.insert(shapes.end(), more.begin(), more.end());
  const DeviceBuffer<float> sink(static_cast<std::size_t>(sms) * 8);
  const double bytes = static_cast<double>(n) * 16.0, nominal = device.nominal_dram_gbps() * 1e9;
  const auto tb_per_s = [&](double us) { return bytes / (us * 1e-6) / 1e12; };
  const auto pct_nominal = [&](double us) { return 100.0 * bytes / (us * 1e-6) / nominal; };
  double best_us = 0;
  for (const Shape& shape : shapes) {
    const int blocks = shape.blocks_per_sm * sms;
    for (int call = 0; call < kCalls + 2; ++call) {
      flush.run(call, s);
      timer.begin_call();
      shape.kernel<<<blocks, kThreads, 0, s>>>(src.get(), n, sink.get());
      GT_CUDA_CHECK_LAUNCH();
      timer.end_call();
    }
    GT_CUDA_CALL(cudaStreamSynchronize(s));
    std::vector<double> us = timer.collect();
    us.erase(us.begin(), us.begin() + 2);  // the first calls load the module
    const double t = median(us);
    if (best_us == 0 || t < best_us) best_us = t;
    std::printf("  %7.1f MB  %-6s flush  %-20s %-14s %d blocks/SM  %2d loads in flight  %8.2f us  %6.2f TB/s  "
                "%5.1f%% of nominal\n",
                mb, flush.name, kHintNames[shape.hint], shape.walk, shape.blocks_per_sm, shape.in_flight, t,
                tb_per_s(t), pct_nominal(t));
  }
  std::printf("%7.1f MB, %s flush: best %.2f us, %.2f TB/s, %.1f%% of the nominal %.2f TB/s\n", mb, flush.name,
              best_us, tb_per_s(best_us), pct_nominal(best_us), nominal / 1e12);
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  try {
    std::vector<double> sizes;
    std::string only;
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--flush" && i + 1 < argc) {
        only = argv[++i];
        if (only != "read" && only != "memset")
          throw gemmtune::InputError("--flush takes read or memset, not " + only);
        continue;
      }
      char* end = nullptr;
      const double mb = std::strtod(argv[i], &end);
      if (end == argv[i] || *end != '\0' || !(mb > 0 && mb < 1e5))
        throw gemmtune::InputError("not a size in MB: " + arg +
                                   " (usage: dram_read_probe [--flush read|memset] MB...)");
      sizes.push_back(mb);
    }
    if (sizes.empty()) sizes = {82, 98, 308};
    const gemmtune::DeviceInfo device = gemmtune::query_device(0);
    const int sms = device.identity.sm_count;
    std::printf("%s: %d SMs, L2 %zu MB, nominal DRAM %.2f TB/s\n", device.identity.gpu_name.c_str(), sms,
                device.l2_bytes >> 20, device.nominal_dram_gbps() / 1e3);
    const gemmtune::CudaStream stream;
    const gemmtune::L2Flush reads(device.l2_bytes);
    const gemmtune::DeviceBuffer<unsigned char> memset_buffer(2 * device.l2_bytes);
    gemmtune::CuptiKernelTimer timer;
    const gemmtune::Flush flushes[] = {{&reads, nullptr, "read"}, {nullptr, &memset_buffer, "memset"}};
    for (const gemmtune::Flush& flush : flushes)
      if (only.empty() || only == flush.name)
        for (double mb : sizes) gemmtune::probe(mb, device, sms, flush, timer, stream.get());
  } catch (const gemmtune::Error& e) {
    std::fprintf(stderr, "dram_read_probe: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dram_read_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
