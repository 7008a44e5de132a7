// l2_read_probe: how fast the SMs can pull data that already sits in L2 into themselves, the bandwidth a GEMM's main
// loop draws on once its operands are L2-resident (issue 49: our mid-size kernels keep 70-130 blocks busy, each
// streaming its A and B tiles from L2, and their tensor pipes run at 30-57% of peak; is L2 the wall?).
//
//   l2_read_probe [WORKING_SET_MB...]      default 8 24 (the H200's L2 holds 60 MB)
//
// Two readers, with one block per SM for a chosen count of SMs (66 to 132), and two per SM:
//   loads  512 threads, each with 8 16-byte loads around L1 in flight (ld.global.cg), summed so none is dead;
//   bulk   the copy engine, as a TMA producer feeds a main loop: one lane (of 1, 2 or 4 warps: "issuers x stages x
//          bytes") issues bulk copies into a ring of stages of shared memory of its own, each completing on its
//          stage's mbarrier, and touches each landed stage.
// Block b reads 8 MB from its own start in the working set (b·set/blocks, wrapping), so the SMs read different lines
// at once. The working set is read once before, then every call is timed by CUPTI (cupti/cupti_kernel_timer.hpp):
// the median of 20. Printed: TB/s over all blocks, GB/s per block, and bytes per SM clock a busy SM drew, at the SM
// clock measured right after the calls (tuner/sm_clock.hpp).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "cuda/cuda_call.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/device_info.hpp"
#include "cuda/stream.hpp"
#include "cupti/cupti_kernel_timer.hpp"
#include "kernels/ptx.cuh"
#include "kernels/wgmma_pipeline.cuh"
#include "tuner/sm_clock.hpp"

namespace gemmtune {
namespace {

namespace pipe = kernels::pipeline;

constexpr int kLoadThreads = 512, kInFlight = 8, kCalls = 20;
constexpr int kChunk = 16 * 1024;
constexpr std::size_t kPerBlock = std::size_t{8} << 20;

// Where block b starts: its share of the working set, in whole chunks.
__device__ std::size_t block_start(std::size_t working, std::size_t chunks_in_set) {
  return (std::size_t{blockIdx.x} * chunks_in_set / gridDim.x) * kChunk % working;
}

__global__ void __launch_bounds__(kLoadThreads) load_read(const float4* __restrict__ set, std::size_t working,
                                                          float* sink) {
  const std::size_t units = working / 16, start = block_start(working, working / kChunk) / 16;
  constexpr std::size_t kUnitsPerBlock = kPerBlock / 16, kStep = std::size_t{kLoadThreads} * kInFlight;
  float sum = 0.f;
  for (std::size_t i = threadIdx.x; i < kUnitsPerBlock; i += kStep) {
    float4 v[kInFlight];
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) {
      const float4* p = set + (start + i + static_cast<std::size_t>(j) * kLoadThreads) % units;
      asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
                   : "=f"(v[j].x), "=f"(v[j].y), "=f"(v[j].z), "=f"(v[j].w)
                   : "l"(p));
    }
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) sum += v[j].x + v[j].y + v[j].z + v[j].w;
  }
  __shared__ float block_sum;
  if (threadIdx.x == 0) block_sum = 0.f;
  __syncthreads();
  atomicAdd(&block_sum, sum);
  __syncthreads();
  if (threadIdx.x == 0) sink[blockIdx.x] = block_sum;
}

// Lane 0 of each of kIssuers warps copies every kIssuers-th chunk of kBytes of the block's share into a ring of its
// own; stage s of its j-th chunk is free again once its chunk j - kStages has landed there (waited on, then touched).
template <int kStages, int kIssuers, int kBytes>
__global__ void __launch_bounds__(32 * kIssuers) bulk_read(const unsigned char* __restrict__ set, std::size_t working,
                                                           float* sink) {
  extern __shared__ __align__(128) unsigned char rings[];
  __shared__ __align__(8) std::uint64_t full[kIssuers][kStages];
  __shared__ float block_sum;
  const int issuer = static_cast<int>(threadIdx.x) / 32;
  if (threadIdx.x == 0) block_sum = 0.f;
  if (threadIdx.x % 32 == 0) {
    for (std::uint64_t& b : full[issuer]) pipe::mbarrier_init(kernels::ptx::smem_address(&b), 1);
    pipe::fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x % 32 == 0) {
    unsigned char* ring = rings + static_cast<std::size_t>(issuer) * kStages * kBytes;
    const std::size_t start = block_start(working, working / kChunk);
    constexpr int kMine = static_cast<int>(kPerBlock / kBytes) / kIssuers;
    float sum = 0.f;
    const auto land = [&](int j) {
      const int s = j % kStages;
      pipe::mbarrier_wait(kernels::ptx::smem_address(&full[issuer][s]), static_cast<std::uint32_t>(j / kStages) & 1);
      sum += reinterpret_cast<const float*>(ring + static_cast<std::size_t>(s) * kBytes)[j % (kBytes / 4)];
    };
    for (int j = 0; j < kMine; ++j) {
      const int s = j % kStages;
      if (j >= kStages) land(j - kStages);
      const std::uint32_t barrier = kernels::ptx::smem_address(&full[issuer][s]);
      const std::size_t chunk = static_cast<std::size_t>(j) * kIssuers + static_cast<std::size_t>(issuer);
      pipe::mbarrier_arrive_expect_tx(barrier, kBytes);
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                       kernels::ptx::smem_address(ring + static_cast<std::size_t>(s) * kBytes)),
                   "l"(set + (start + chunk * kBytes) % working), "r"(kBytes), "r"(barrier)
                   : "memory");
    }
    for (int j = kMine > kStages ? kMine - kStages : 0; j < kMine; ++j) land(j);
    atomicAdd(&block_sum, sum);
  }
  __syncthreads();
  if (threadIdx.x == 0) sink[blockIdx.x] = block_sum;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void probe(double mb, int sms, CuptiKernelTimer& timer, cudaStream_t s) {
  const std::size_t working = static_cast<std::size_t>(mb * (1 << 20)) / kChunk * kChunk;
  const DeviceBuffer<unsigned char> set(working);
  GT_CUDA_CALL(cudaMemsetAsync(set.get(), 0x3c, working, s));  // 0.0115f: finite sums
  const DeviceBuffer<float> sink(static_cast<std::size_t>(2 * sms));
  using BulkKernel = void (*)(const unsigned char*, std::size_t, float*);
  struct Run {
    const char* reader;
    int blocks;
    BulkKernel bulk;  // null: loads
    int stages, issuers, bytes;
  };
  std::vector<Run> runs;
  const auto bulk = [&](const char* name, std::initializer_list<int> grids, BulkKernel kernel, int stages,
                        int issuers, int bytes) {
    for (const int blocks : grids) runs.push_back({name, blocks, kernel, stages, issuers, bytes});
  };
  bulk("bulk 1x6x16KB", {66, 72, 105, 110, 120, sms}, bulk_read<6, 1, kChunk>, 6, 1, kChunk);
  bulk("bulk 1x12x16KB", {sms}, bulk_read<12, 1, kChunk>, 12, 1, kChunk);
  bulk("bulk 1x24x4KB", {sms}, bulk_read<24, 1, 4096>, 24, 1, 4096);
  bulk("bulk 2x6x16KB", {66, sms}, bulk_read<6, 2, kChunk>, 6, 2, kChunk);
  bulk("bulk 4x3x16KB", {66, sms}, bulk_read<3, 4, kChunk>, 3, 4, kChunk);
  bulk("bulk 1x6x16KB", {2 * sms}, bulk_read<6, 1, kChunk>, 6, 1, kChunk);
  for (const int blocks : {66, 72, 105, 110, 120, sms, 2 * sms}) runs.push_back({"loads", blocks, nullptr, 0, 0, 0});
  for (const Run& r : runs) {
    if (r.bulk)
      GT_CUDA_CALL(cudaFuncSetAttribute(r.bulk, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        r.issuers * r.stages * r.bytes));
    for (int call = 0; call < kCalls + 2; ++call) {
      timer.begin_call();
      if (r.bulk)
        r.bulk<<<r.blocks, 32 * r.issuers, r.issuers * r.stages * r.bytes, s>>>(set.get(), working, sink.get());
      else
        load_read<<<r.blocks, kLoadThreads, 0, s>>>(reinterpret_cast<const float4*>(set.get()), working, sink.get());
      GT_CUDA_CHECK_LAUNCH();
      timer.end_call();
    }
    GT_CUDA_CALL(cudaStreamSynchronize(s));
    std::vector<double> us = timer.collect();
    us.erase(us.begin(), us.begin() + 2);  // the first calls load the module and pull the set into L2
    const double t = median(us), bytes = static_cast<double>(kPerBlock) * r.blocks;
    const double per_block_gbs = static_cast<double>(kPerBlock) / (t * 1e-6) / 1e9;
    const int sms_used = std::min(r.blocks, sms);  // a grid of more than one block per SM fills them all
    const double mhz = measure_sm_clock_mhz(s);  // right after the calls: the clock they ran at, near enough
    std::printf("  %5.1f MB set  %-14s %3d blocks  %9.2f us  %6.2f TB/s  %6.1f GB/s a block  %5.1f B per SM clock "
                "a busy SM (%.0f MHz)\n",
                mb, r.reader, r.blocks, t, bytes / (t * 1e-6) / 1e12, per_block_gbs,
                bytes / sms_used / (t * 1e-6) / (mhz * 1e6), mhz);
  }
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  try {
    std::vector<double> sizes;
    for (int i = 1; i < argc; ++i) {
      char* end = nullptr;
      const double mb = std::strtod(argv[i], &end);
      if (end == argv[i] || *end != '\0' || !(mb >= 1 && mb <= 40))
        throw gemmtune::InputError(std::string("not a working set of 1 to 40 MB: ") + argv[i] +
                                   " (usage: l2_read_probe [WORKING_SET_MB...])");
      sizes.push_back(mb);
    }
    if (sizes.empty()) sizes = {8, 24};
    const gemmtune::DeviceInfo device = gemmtune::query_device(0);
    const int sms = device.identity.sm_count;
    std::printf("%s: %d SMs, L2 %zu MB\n", device.identity.gpu_name.c_str(), sms, device.l2_bytes >> 20);
    const gemmtune::CudaStream stream;
    gemmtune::CuptiKernelTimer timer;
    for (double mb : sizes) gemmtune::probe(mb, sms, timer, stream.get());
  } catch (const gemmtune::Error& e) {
    std::fprintf(stderr, "l2_read_probe: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "l2_read_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
