// wgmma_rate_probe: what the tensor pipe of one SM does with our consumer loop and nothing else (issue 49: the busy
// SMs of mid-size calls reach 30-57% of their tensor peak, unaligned_mid_ncu.txt; is that the instruction, the
// fragment loads beside it, the copies filling shared memory at the same time, or the pipeline's waits?).
//
//   wgmma_rate_probe [K_TILES] [tensor|quads|mainloop|sustained|bursts]   default 4096 k tiles a block; "tensor": the
//       tensor copies alone; "quads": those of 2x2 clusters, beside the pairs'; "mainloop": the kernel's whole k loop
//       (copies, barriers, wgmmas, operand loads) over one wave, beside its copies alone; "sustained": the 256x128
//       pairs' k loop launched 1500 times back to back, its clock over time, with constant operands, then random ones;
//       "bursts": 40 launches of the 128x128, 192x128 and 256x128 pairs' loops on random operands, and the 256x128
//       one on constant operands, each after 3 s idle, as a benchmark's timed window finds the board
//
// One block per SM (132), three warpgroups as in wgmma_tf32_tma_kernel: consumers 0 and 1 (232 registers each), the
// producer warpgroup (40). Each consumer runs the kernel's k loop over a ring of 4 stages that nobody refills: per k
// tile a group of 4 m64nNk8 wgmmas (A through the kernel's RegisterOperand, B = a swizzled stage), wait_group<1>,
// then, where "frags" is on, the next tile's register operand loaded from the stage's padded B tile as the kernel does.
// Where "copies" is on, lanes 0 of the producer's 4 warps keep bulk copies of an L2-resident buffer landing in the
// stages meanwhile (they overwrite what the wgmmas read: the values are garbage, the traffic is the kernel's). No
// barrier between consumers and producer: what is measured is rate, not correctness.
// Printed per case: cycles a k tile (clock64 around the consumer loop, median over blocks), FLOP a clock per SM and
// its share of 2048 (Hopper's dense tf32 rate per SM, 494.7 TFLOP/s at 1830 MHz on 132 SMs), and the copies' bytes a
// clock per SM. Then a 128x128 tile's copies with no math: "copies alone" (delivery_kernel) as contiguous 16 KB
// chunks, unicast and in pairs that multicast A, 2-6 stages, free-running or paced as the kernel's consumers release
// stages, every block on chunks of its own or "shared" as one wave of a GEMM reads them; "tensor copies"
// (tensor_delivery_kernel) as the kernel makes them, 2-D boxes of a real 1408x1536x8192 problem, unpaired or in pairs
// sharing A (our c2) or B, their tiles row by row or in the kernel's grouped order. The rate the L2 lands a k tile's
// operands in every SM at once.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "cuda/cuda_call.hpp"
#include "cuda/device_buffer.hpp"
#include "kernels/cluster.cuh"
#include "kernels/kernel_launch.hpp"
#include "kernels/ptx.cuh"
#include "kernels/tile_schedule.cuh"
#include "kernels/tma_operand.cuh"
#include "kernels/wgmma_gemm.cuh"
#include "kernels/wgmma_pipeline.cuh"

namespace gemmtune {
namespace {

namespace pipe = kernels::pipeline;
namespace wg = kernels::wgmma;

constexpr int kStages = 4, kBn = 128, kBStride = kBn + 8, kIssuers = 4;
constexpr int kBFloats = 32 * kBStride;  // NN's padded B tile: 32 k rows of bn + 8

// A stage: the N x 32 swizzled tile wgmma reads from shared memory, then the padded B tile, 1024-byte aligned.
template <int N>
struct Smem {
  static constexpr int kStage = N * 128 + (kBFloats * 4 + 1023) / 1024 * 1024;
  static constexpr std::size_t kTotal = 1024 + std::size_t{kStages} * kStage;
};

struct Counters {
  long long cycles;      // the consumer loop of warpgroup 0
  long long copy_bytes;  // what the producer's copies landed meanwhile
  long long ns;          // mainloop_kernel: the same loop by the global timer, so cycles / ns is the SM clock it ran at
};

__device__ long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  return static_cast<long long>(t);
}

// A consumer thread's register operand of one k tile, loaded as the kernel loads it from the plain NN B tile (32 k
// rows of bn + 8); tile_b points at the thread's first float, b_first() floats into the tile.
// kStride: the tile's row length in floats (bn + 8, or bn where mainloop_kernel drops the padding).
template <int kStride = kBStride>
__device__ int b_first() {
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32;
  return lane % 4 * kStride + tid / 32 * 16 + lane / 4;
}
template <int kStride = kBStride>
__device__ __forceinline__ void load_operand(kernels::RegisterOperand<false>& frag, const float* tile_b) {
#pragma unroll
  for (int s = 0; s < 4; ++s) {
    const int offsets[4] = {8 * kStride * s, 8 * kStride * s + 8, 4 * kStride + 8 * kStride * s,
                            4 * kStride + 8 * kStride * s + 8};
#pragma unroll
    for (int q = 0; q < 4; ++q) frag.set(s, q, __float_as_uint(tile_b[offsets[q]]));
  }
}

// B as the copy engine lands it in bn / 32 boxes of 32 k rows x 32 floats, 128-byte swizzle (no padding fetched):
// warp w's lanes take columns 64(w / 4) + 4(w % 4) + 16(g / 4) + g % 4 and 32 more, so that a load's 4 rows x 8 lanes
// fall on 32 distinct banks through the swizzle (g < 4 on units 0-3 of the row, g >= 4 on units 4-7).
__device__ __forceinline__ void load_swizzled_operand(kernels::RegisterOperand<false>& frag, const float* tile_b) {
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32, g = lane / 4, t = lane % 4;
  const int unit = warp % 4 + 4 * (g / 4), at = 2 * (warp / 4) * 1024 + g % 4;  // box 2(w / 4), float g % 4
  const float* const lo = tile_b + at + t * 32 + (unit ^ t) * 4;
  const float* const hi = tile_b + at + (t + 4) * 32 + (unit ^ (t + 4)) * 4;
#pragma unroll
  for (int s = 0; s < 4; ++s) {
    frag.set(s, 0, __float_as_uint(lo[256 * s]));
    frag.set(s, 1, __float_as_uint(lo[256 * s + 1024]));
    frag.set(s, 2, __float_as_uint(hi[256 * s]));
    frag.set(s, 3, __float_as_uint(hi[256 * s + 1024]));
  }
}

// The kernel's loop over k tiles: step(g, buffer) with the operand buffer a compile-time constant (a run-time index
// moves the array to local memory), unrolled by two; then the last group's wait.
template <int kRegs, class Step>
__device__ __forceinline__ void run_groups(float (&acc)[kRegs], int k_tiles, Step&& step) {
  wg::fence_operands(acc);
  for (int g = 0; g < k_tiles; g += 2) {
    step(g, std::integral_constant<int, 0>{});
    step(g + 1, std::integral_constant<int, 1>{});
  }
  wg::wait_group<0>();
  wg::fence_operands(acc);
}

// The same over three operand buffers, for a loop that loads each tile's register operand two groups ahead.
template <int kRegs, class Step>
__device__ __forceinline__ void run_groups_of_three(float (&acc)[kRegs], int k_tiles, Step&& step) {
  wg::fence_operands(acc);
  for (int g = 0; g < k_tiles; g += 3) {
    step(g, std::integral_constant<int, 0>{});
    if (g + 1 < k_tiles) step(g + 1, std::integral_constant<int, 1>{});
    if (g + 2 < k_tiles) step(g + 2, std::integral_constant<int, 2>{});
  }
  wg::wait_group<0>();
  wg::fence_operands(acc);
}

// A store of the accumulators' sum that never happens but that the compiler cannot drop: the wgmmas stay.
template <int kRegs>
__device__ __forceinline__ void keep_alive(const float (&acc)[kRegs], float* sink) {
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < kRegs; ++i) sum += acc[i];
  if (sum == 12345.f) sink[blockIdx.x] = sum;
}

template <int N, int kConsumers, bool kFrags, bool kCopies>
__global__ void __launch_bounds__(384, 1)
    rate_kernel(const unsigned char* __restrict__ set, std::size_t working, int k_tiles, Counters* out, float* sink) {
  extern __shared__ float4 shared_mem[];
  __shared__ __align__(8) std::uint64_t full[kIssuers][2];
  __shared__ volatile int stop;
  const std::uint32_t raw = kernels::ptx::smem_address(shared_mem);
  const std::uint32_t base = (raw + 1023) & ~1023u;
  float* const smem = reinterpret_cast<float*>(reinterpret_cast<char*>(shared_mem) + (base - raw));
  const int tid = static_cast<int>(threadIdx.x), warpgroup = tid / 128;
  for (std::size_t i = static_cast<std::size_t>(tid); i < kStages * Smem<N>::kStage / 4; i += blockDim.x)
    smem[i] = 1.0f / static_cast<float>(1 + i % 97);
  if (tid == 0) stop = 0;
  if (tid % 32 == 0 && warpgroup == 2) {
    for (std::uint64_t& b : full[tid / 32 % 4]) pipe::mbarrier_init(kernels::ptx::smem_address(&b), 1);
    pipe::fence_barrier_init();
  }
  wg::fence_async_shared();
  __syncthreads();

  if (warpgroup == 2) {
    pipe::release_registers<40>();
    if (!kCopies || tid % 32 != 0) return;
    // Issuer w keeps two copies in flight into stage w, each half of it.
    const int w = tid / 32 % 4;
    constexpr std::uint32_t kBytes = static_cast<std::uint32_t>(Smem<N>::kStage / 2) / 16 * 16;
    const std::uint32_t dst = base + static_cast<std::uint32_t>(w * Smem<N>::kStage);
    long long landed = 0;
    std::size_t at = static_cast<std::size_t>(blockIdx.x * kIssuers + w) * 65536 % working;
    int j = 0;
    for (; stop == 0; ++j) {
      const int s = j % 2;
      const std::uint32_t barrier = kernels::ptx::smem_address(&full[w][s]);
      if (j >= 2) {
        pipe::mbarrier_wait(barrier, static_cast<std::uint32_t>((j - 2) / 2) & 1);
        landed += kBytes;
      }
      pipe::mbarrier_arrive_expect_tx(barrier, kBytes);
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                       dst + static_cast<std::uint32_t>(s) * kBytes),
                   "l"(set + at), "r"(kBytes), "r"(barrier)
                   : "memory");
      at = (at + kBytes) % (working - kBytes);
    }
    for (int d = j > 2 ? j - 2 : 0; d < j; ++d)
      pipe::mbarrier_wait(kernels::ptx::smem_address(&full[w][d % 2]), static_cast<std::uint32_t>(d / 2) & 1);
    atomicAdd(reinterpret_cast<unsigned long long*>(&out[blockIdx.x].copy_bytes),
              static_cast<unsigned long long>(landed));
    return;
  }

  pipe::claim_registers<232>();
  if (warpgroup >= kConsumers) return;
  const int first = b_first();
  const auto stage_a = [&](int g) { return base + static_cast<std::uint32_t>((g % kStages) * Smem<N>::kStage); };
  kernels::RegisterOperand<false> frags[2];
  const auto fetch = [&](int g, auto buffer) {
    load_operand(frags[buffer], smem + ((g % kStages) * Smem<N>::kStage + N * 128) / 4 + first);
  };
  fetch(0, std::integral_constant<int, 0>{});
  fetch(1, std::integral_constant<int, 1>{});
  float acc[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) acc[i] = 0.f;
  const auto step = [&](int kt, auto buffer) {
    const std::uint64_t desc = wg::sw128_kmajor_descriptor(stage_a(kt));
    kernels::issue_k_steps<N, false>(acc, frags[buffer], desc, desc);
    wg::wait_group<1>();
    if constexpr (kFrags) fetch(kt + 1, std::integral_constant<int, 1 - decltype(buffer)::value>{});
  };
  const long long start = clock64();
  run_groups(acc, k_tiles, step);
  const long long cycles = clock64() - start;
  keep_alive(acc, sink);
  pipe::sync_first_threads<128 * kConsumers>();
  if (tid == 0) {
    out[blockIdx.x].cycles = cycles;
    stop = 1;
  }
}

// The c2 kernels' copies alone: per k tile, 16 KB of A and 16 KB of B land in a stage of a ring (lane 0 of warp 0
// issues, lane 0 of warp 1 waits for each stage and releases it as a consumer would). kMulticast: blocks in pairs,
// each copying its half of the pair's A into both blocks (the stage is free again once both released it), as
// wgmma_tf32_tma_kernel's clusters do; else each block copies all of its A. Every block lands 32 KB a k tile either
// way; the L2 serves 24 KB of it with multicast, 32 KB without. kPaced: released as CopyRing::consume says. kShared:
// the blocks read as one wave of 1408x1536's 128x128 tiles does (11 rows x 12 columns of tiles, pairs along a row): the
// 6 pairs of a row read its A chunk of k tile g, the 11 blocks of a column its B chunk, at about the same time; else
// every pair and block reads chunks of its own.
constexpr int kHalfTile = 16 * 1024;

// The copy-only kernels' ring of kStages stages: full barriers (the issuing lane's arrival and the copies' bytes) and
// empty ones (a release from each block of the pair). Lane 0 of warp 1 plays the consumers: it waits for each stage
// and releases it at once, or (kPaced) as the kernel's consumers do, as if each k tile's group took the 512 clocks a
// 128x128 tile takes at the pipe's rate and began once its stage had landed and the group before was done: stage g - 1
// is released when group g - 1 is done and stage g has landed (the kernel's wait_group<1> after issuing group g).
template <int kStages, bool kMulticast, int kPeers = kMulticast ? 2 : 1>
struct CopyRing {
  static constexpr int kPair = kPeers;
  std::uint64_t full[kStages], empty[kStages];

  __device__ std::uint32_t full_of(int g) { return kernels::ptx::smem_address(&full[g % kStages]); }
  __device__ std::uint32_t empty_of(int g) { return kernels::ptx::smem_address(&empty[g % kStages]); }
  // Thread 0 sets the barriers up; every block of the pair meets after, before any copy reaches one.
  __device__ void init() {
    if (threadIdx.x == 0) {
      for (int s = 0; s < kStages; ++s) {
        pipe::mbarrier_init(full_of(s), 1);
        pipe::mbarrier_init(empty_of(s), kPair);
      }
      pipe::fence_barrier_init();
    }
    meet();
  }
  // Every block of the pair (or this block) meets; at the end, so that no block leaves while its peer may still arrive
  // on its barriers or copy into it.
  __device__ static void meet() {
    if constexpr (kMulticast)
      kernels::cluster::sync();
    else
      __syncthreads();
  }
  // The issuing lane, before k tile g's copies: its stage's last use is released.
  __device__ void acquire(int g) {
    if (g >= kStages) pipe::mbarrier_wait(empty_of(g), static_cast<std::uint32_t>(g / kStages - 1) & 1);
  }
  template <bool kPaced>
  __device__ void consume(int k_tiles) {
    const auto release = [&](int g) {
      for (int peer = 0; peer < kPair; ++peer)
        pipe::mbarrier_arrive_cluster(kernels::cluster::peer_address(empty_of(g), static_cast<std::uint32_t>(peer)));
    };
    long long group_done = 0;  // kPaced: when the group of the k tile before is complete
    for (int g = 0; g < k_tiles; ++g) {
      pipe::mbarrier_wait(full_of(g), static_cast<std::uint32_t>(g / kStages) & 1);
      if constexpr (kPaced) {
        while (clock64() < group_done) {
        }
        if (g > 0) release(g - 1);
        group_done = std::max(clock64(), group_done) + 512;
      } else {
        release(g);
      }
    }
  }
};

// The dynamic shared memory's first 1024-aligned address (swizzled boxes and bulk copies want it).
__device__ std::uint32_t aligned_base(const float4* shared_mem) {
  return (kernels::ptx::smem_address(shared_mem) + 1023) & ~1023u;
}

// Launches `launch` (one call of a probe kernel that writes one Counters per block into `out`) five times; the median
// block's Counters of each call after the first.
template <class Launch>
std::vector<Counters> median_blocks(const DeviceBuffer<Counters>& out, int sms, Launch&& launch) {
  std::vector<Counters> medians;
  for (int rep = 0; rep < 5; ++rep) {
    GT_CUDA_CALL(cudaMemset(out.get(), 0, sizeof(Counters) * static_cast<std::size_t>(sms)));
    launch();
    GT_CUDA_CALL(cudaGetLastError());
    GT_CUDA_CALL(cudaDeviceSynchronize());
    std::vector<Counters> host(static_cast<std::size_t>(sms));
    GT_CUDA_CALL(cudaMemcpy(host.data(), out.get(), sizeof(Counters) * host.size(), cudaMemcpyDeviceToHost));
    std::sort(host.begin(), host.end(), [](const Counters& a, const Counters& b) { return a.cycles < b.cycles; });
    if (rep > 0) medians.push_back(host[host.size() / 2]);
  }
  return medians;
}

// The upper middle of `v` (its median for an odd count).
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The median over calls of the median block's cycles a k tile.
double cycles_per_k_tile(const std::vector<Counters>& medians, int k_tiles) {
  std::vector<double> per_tile;
  for (const Counters& c : medians) per_tile.push_back(static_cast<double>(c.cycles) / k_tiles);
  return median(per_tile);
}

template <int kRingStages, bool kMulticast, bool kPaced, bool kShared = false>
__global__ void __launch_bounds__(64)
    delivery_kernel(const unsigned char* __restrict__ set, std::size_t working, int k_tiles, Counters* out) {
  using Ring = CopyRing<kRingStages, kMulticast>;
  extern __shared__ float4 shared_mem[];
  __shared__ __align__(8) Ring ring;
  const std::uint32_t base = aligned_base(shared_mem);
  const int tid = static_cast<int>(threadIdx.x);
  ring.init();
  const std::uint32_t rank = kMulticast ? kernels::cluster::rank() : 0;
  const std::size_t pair = blockIdx.x / Ring::kPair, chunks = working / kHalfTile;
  const long long start = clock64();
  if (tid == 0) {
    for (int g = 0; g < k_tiles; ++g) {
      ring.acquire(g);
      const std::uint32_t stage = base + static_cast<std::uint32_t>(g % kRingStages) * 2 * kHalfTile;
      const std::uint32_t full = ring.full_of(g);
      pipe::mbarrier_arrive_expect_tx(full, 2 * kHalfTile);
      const std::size_t a_panel = kShared ? blockIdx.x / 12 : pair, b_panel = kShared ? blockIdx.x % 12 : blockIdx.x;
      const unsigned char* a = set + (a_panel * 977 + static_cast<std::size_t>(g)) % chunks * kHalfTile;
      const unsigned char* b = set + (b_panel * 1931 + static_cast<std::size_t>(g) + chunks / 2) % chunks * kHalfTile;
      if constexpr (kMulticast) {
        constexpr std::uint32_t kSlice = kHalfTile / 2;
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
            " [%0], [%1], %2, [%3], %4;\n" ::"r"(stage + rank * kSlice),
            "l"(a + rank * kSlice), "r"(kSlice), "r"(full), "h"(std::uint16_t{3})
            : "memory");
      } else {
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(stage),
            "l"(a), "r"(kHalfTile), "r"(full)
            : "memory");
      }
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                       stage + kHalfTile),
                   "l"(b), "r"(kHalfTile), "r"(full)
                   : "memory");
    }
  } else if (tid == 32) {
    ring.template consume<kPaced>(k_tiles);
    out[blockIdx.x].cycles = clock64() - start;
  }
  Ring::meet();
}

template <int kRingStages, bool kMulticast, bool kPaced, bool kShared = false>
void run_delivery(const DeviceBuffer<unsigned char>& set, std::size_t working, int k_tiles, int sms) {
  const auto kernel = delivery_kernel<kRingStages, kMulticast, kPaced, kShared>;
  const std::size_t smem = 1024 + std::size_t{kRingStages} * 2 * kHalfTile;
  GT_CUDA_CALL(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  const DeviceBuffer<Counters> out(static_cast<std::size_t>(sms));
  const kernels::KernelLaunch launch(dim3(static_cast<unsigned>(sms)), dim3(kMulticast ? 2u : 1u), 64, smem, nullptr);
  const std::vector<Counters> medians = median_blocks(out, sms, [&] {
    GT_CUDA_CALL(cudaLaunchKernelEx(&launch.config, kernel, set.get(), working, k_tiles, out.get()));
  });
  const double cycles = cycles_per_k_tile(medians, k_tiles);
  const double from_l2 = kMulticast ? 1.5 * kHalfTile : 2.0 * kHalfTile;
  std::printf(
      "copies alone, %d stages of 32 KB, %-9s %-6s %-6s  %8.1f cycles/k tile  landed %5.1f B/clk/SM  from L2 "
      "%5.1f B/clk/SM  (a 128x128 k tile at the tensor pipe's rate: 512 cycles)\n",
      kRingStages, kMulticast ? "multicast" : "unicast", kPaced ? "paced" : "", kShared ? "shared" : "", cycles,
      2.0 * kHalfTile / cycles, from_l2 / cycles);
}

// The same copies as the kernel makes them: 2-D tensor copies of 1408x1536x8192's operands (A 1408 rows of 8192, its
// box 32 floats x 128 rows, or 64 in pairs, 128-byte swizzle; B 8192 rows of 1536, its box 136 floats (the padded
// tile row) x 32 rows), block b on tile (b / 12, b % 12), k tile g at k0 = 32 (g % kWrap), paced as delivery_kernel.
// kWrap 256: all of A and B (96 MB, more than L2 holds: each k tile's panels come from DRAM once, as in the GEMM);
// 32: the first 1024 of k only (12 MB, L2-resident). kShareB (with kMulticast): pairs along m instead, sharing the B
// tile (each block copies 16 of its 32 k rows into both) and copying A alone, as cuBLASLt's 1x2 clusters pair tiles.
// kGrouped: blocks (or pairs) take their tiles in the kernel's order instead (grouped_tile: groups of 8 tile rows,
// column by column, the pair's two tiles side by side along n), so that consecutive pairs share B, not A: whether the
// order in which one wave's tiles are handed out moves the rate their copies land at (kloop_ncu_vs_cublaslt.txt).
// kQuad 2: clusters of 2x2 tiles instead, each block copying half of its A tile into the block beside it (along n)
// and half of its B tile (16 k rows) into the block below it (along m): 16.7 KB from L2 a block and k tile instead of
// the pairs' 25.4 KB, the same 33.4 KB landed. Whether the L2's output or what lands in an SM bounds the pairs' rate.
// kQuad 1: the same clusters, B copied whole by each block (the pairs' copies, in clusters of four).
// A 128x128 tile's boxes as the kernel copies them: A 128 rows x 32 floats, B 32 rows of b_width floats (the
// kernel's bn + 8); a stage of both, 1024-byte aligned.
constexpr std::uint32_t kTensorABytes = 128 * 32 * 4;
// b_width 0: four swizzled boxes of 32 floats (128 floats a row, unpadded).
constexpr std::uint32_t tensor_b_bytes(int b_width) {
  return 32 * static_cast<std::uint32_t>(b_width == 0 ? 128 : b_width) * 4;
}
// rows: the A tile's (mainloop_kernel's taller tiles take 192 or 256).
constexpr std::uint32_t tensor_stage_bytes(int b_width, int rows = 128) {
  return (static_cast<std::uint32_t>(rows) * 32 * 4 + tensor_b_bytes(b_width) + 1023) / 1024 * 1024;
}
constexpr std::uint32_t kTensorBBytes = tensor_b_bytes(kBStride), kTensorStage = tensor_stage_bytes(kBStride);

// Fills x with values uniform in [-1, 1) from a hash of the index: operands that toggle the tensor cores' inputs as a
// real GEMM's do, which draws more power than one repeated value.
__global__ void fill_random(float* x, std::size_t count) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x) {
    std::uint32_t h = static_cast<std::uint32_t>(i) * 0x9E3779B1u;
    h ^= h >> 15;
    h *= 0x85EBCA77u;
    h ^= h >> 13;
    x[i] = static_cast<float>(h >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
}

// 1408x1536x8192's A and B, one wave of 128x128 tiles on 132 SMs, every float the same finite value (what the copies
// move matters, not what the math makes) or random ones (what the tensor cores' power draw depends on), and the tensor
// maps of their boxes.
struct WaveOperands {
  static constexpr std::int64_t kN = 1536, kK = 8192;
  std::int64_t m;  // 11 tile rows: 1408 for 128x128 tiles (mainloop_kernel's taller tiles take more)
  DeviceBuffer<float> a, b{static_cast<std::size_t>(kK * kN)};
  explicit WaveOperands(std::int64_t rows = 1408, bool random = false)
      : m(rows), a(static_cast<std::size_t>(rows * kK)) {
    if (random) {
      fill_random<<<1024, 256>>>(a.get(), a.size());
      fill_random<<<1024, 256>>>(b.get(), b.size());
      GT_CUDA_CALL(cudaGetLastError());
    } else {
      GT_CUDA_CALL(cudaMemset(a.get(), 0x3c, sizeof(float) * a.size()));
      GT_CUDA_CALL(cudaMemset(b.get(), 0x3c, sizeof(float) * b.size()));
    }
  }
  // A's box: `rows` rows of 32 floats, 128-byte swizzle (the layout wgmma reads).
  CUtensorMap map_a(int rows, CUtensorMapL2promotion promotion) const {
    return kernels::tensor_map_2d(a.get(), m, kK, kK, rows, 32, CU_TENSOR_MAP_SWIZZLE_128B, promotion);
  }
  // B's box: `rows` k rows of `width` floats, unswizzled.
  CUtensorMap map_b(int rows, int width, CUtensorMapL2promotion promotion) const {
    return kernels::tensor_map_2d(b.get(), kK, kN, kN, rows, width == 0 ? 32 : width,
                                  width == 0 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE, promotion);
  }
};

template <bool kMulticast, int kWrap, bool kShareB = false, bool kGrouped = false, int kQuad = 0>
__global__ void __launch_bounds__(64)
    tensor_delivery_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                           int k_tiles, Counters* out) {
  constexpr int kRing = 4;
  static_assert(!kQuad || (kMulticast && !kShareB && !kGrouped), "a quad multicasts both operands, row by row");
  using Ring = CopyRing<kRing, kMulticast, kQuad ? 4 : (kMulticast ? 2 : 1)>;
  extern __shared__ float4 shared_mem[];
  __shared__ __align__(8) Ring ring;
  const std::uint32_t base = aligned_base(shared_mem);
  const int tid = static_cast<int>(threadIdx.x);
  ring.init();
  const std::uint32_t rank = kMulticast ? kernels::cluster::rank() : 0;
  static_assert(!(kGrouped && kShareB), "the kernel's order pairs tiles along n");
  const int pair = static_cast<int>(blockIdx.x / 2);
  int row0 = static_cast<int>(blockIdx.x / 12) * 128, col0 = static_cast<int>(blockIdx.x % 12) * 128;
  if constexpr (kGrouped) {
    const int id = kMulticast ? pair : static_cast<int>(blockIdx.x);
    const kernels::BlockTile tile = kernels::grouped_tile(id, 128, kMulticast ? 256 : 128, 1408, 1536);
    row0 = static_cast<int>(tile.row0);
    col0 = static_cast<int>(tile.col0) + static_cast<int>(rank) * 128;
  } else if constexpr (kShareB) {
    row0 = (2 * (pair / 12) + static_cast<int>(rank)) % 11 * 128;
    col0 = pair % 12 * 128;
  } else if constexpr (kQuad) {  // 6 quads a row of 12 tiles; the 11th tile row's quads wrap onto row 0
    const int quad = static_cast<int>(blockIdx.x / 4), rm = static_cast<int>(rank / 2), rn = static_cast<int>(rank % 2);
    row0 = (2 * (quad / 6) + rm) % 11 * 128;
    col0 = (2 * (quad % 6) + rn) * 128;
  }
  const long long start = clock64();
  if (tid == 0) {
    for (int g = 0; g < k_tiles; ++g) {
      const int k0 = 32 * (g % kWrap);
      ring.acquire(g);
      const std::uint32_t stage = base + static_cast<std::uint32_t>(g % kRing) * kTensorStage;
      const std::uint32_t full = ring.full_of(g);
      pipe::mbarrier_arrive_expect_tx(full, kTensorABytes + kTensorBBytes);
      if constexpr (kQuad) {
        const int rm = static_cast<int>(rank / 2), rn = static_cast<int>(rank % 2);
        pipe::tma_multicast_2d(stage + static_cast<std::uint32_t>(rn) * (kTensorABytes / 2), map_a, full, k0,
                               row0 + rn * 64, static_cast<std::uint16_t>(3u << (2 * rm)));
        if constexpr (kQuad == 2)
          pipe::tma_multicast_2d(stage + kTensorABytes + static_cast<std::uint32_t>(rm) * (kTensorBBytes / 2), map_b,
                                 full, col0, k0 + 16 * rm, static_cast<std::uint16_t>(5u << rn));
        else
          pipe::tma_load_2d(stage + kTensorABytes, map_b, full, col0, k0);
        continue;
      }
      if constexpr (kMulticast && !kShareB)
        pipe::tma_multicast_2d(stage + rank * (kTensorABytes / 2), map_a, full, k0, row0 + static_cast<int>(rank) * 64,
                               std::uint16_t{3});
      else
        pipe::tma_load_2d(stage, map_a, full, k0, row0);
      if constexpr (kShareB)
        pipe::tma_multicast_2d(stage + kTensorABytes + rank * (kTensorBBytes / 2), map_b, full, col0,
                               k0 + 16 * static_cast<int>(rank), std::uint16_t{3});
      else
        pipe::tma_load_2d(stage + kTensorABytes, map_b, full, col0, k0);
    }
  } else if (tid == 32) {
    ring.template consume<true>(k_tiles);
    out[blockIdx.x].cycles = clock64() - start;
  }
  Ring::meet();
}

// 256-byte L2 promotion unless told: the kernels' maps until d7cbe65, as the first runs of the results file measured.
template <bool kMulticast, int kWrap, bool kShareB = false, bool kGrouped = false, int kQuad = 0>
void run_tensor_delivery(int k_tiles, int sms, CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  const WaveOperands operands;
  const CUtensorMap map_a = operands.map_a(kMulticast && !kShareB ? 64 : 128, promotion);
  const CUtensorMap map_b = operands.map_b(kShareB || kQuad == 2 ? 16 : 32, kBStride, promotion);
  const auto kernel = tensor_delivery_kernel<kMulticast, kWrap, kShareB, kGrouped, kQuad>;
  const std::size_t smem = 1024 + 4 * kTensorStage;
  GT_CUDA_CALL(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  const unsigned cluster = kQuad ? 4u : (kMulticast ? 2u : 1u);
  if constexpr (kQuad) {  // whole quads only, all resident at once: a second wave would pull with fewer SMs
    const kernels::KernelLaunch one(dim3(cluster), dim3(cluster), 64, smem, nullptr);
    int quads = 0;
    GT_CUDA_CALL(cudaOccupancyMaxActiveClusters(&quads, kernel, &one.config));
    sms = std::min(sms, quads * 4);
    std::printf("# quads: %d resident at once, %d blocks\n", quads, sms);
  }
  const DeviceBuffer<Counters> out(static_cast<std::size_t>(sms));
  const kernels::KernelLaunch launch(dim3(static_cast<unsigned>(sms)), dim3(cluster), 64, smem, nullptr);
  const std::vector<Counters> medians = median_blocks(
      out, sms, [&] { GT_CUDA_CALL(cudaLaunchKernelEx(&launch.config, kernel, map_a, map_b, k_tiles, out.get())); });
  const double cycles = cycles_per_k_tile(medians, k_tiles);
  std::printf(
      "tensor copies of 1408x1536x8192's tiles, 4 stages, %-9s paced, %-13s k tiles 0-%-3d, L2 promotion %-4s  "
      "%8.1f cycles/k tile  landed %5.1f B/clk/SM\n",
      kQuad == 2   ? "quads: AB"
      : kQuad == 1 ? "quads: A"
                   : (kShareB ? "pairs: B" : (kMulticast ? "pairs: A" : "unicast")),
      kGrouped ? "kernel order," : "row by row,", kWrap - 1,
      promotion == CU_TENSOR_MAP_L2_PROMOTION_NONE      ? "none"
      : promotion == CU_TENSOR_MAP_L2_PROMOTION_L2_64B  ? "64B"
      : promotion == CU_TENSOR_MAP_L2_PROMOTION_L2_128B ? "128B"
                                                        : "256B",
      cycles, (kTensorABytes + kTensorBBytes) / cycles);
}

// The kernel's k loop whole, with nothing else (no epilogue, one tile a block): wgmma_tf32_tma_kernel's protocol over
// one wave of 1408x1536x8192's 128x128 tiles, its copies those of run_tensor_delivery (pairs along a row sharing A,
// 128-byte promotion). The producer lane waits for a stage to be empty (every consumer warp of the pair released it)
// and issues its copies; each of the two consumer warpgroups waits for a k tile, issues its group of 4 m64n128k8
// wgmmas, waits for the group before, releases that group's stage (each warp into each block of the pair) and loads
// the next tile's register operand (kFrags; else the wgmmas read the first operand again). Whether the k loop alone
// runs at its copies' rate (710-720 clocks a k tile in pairs) or at the 797 the kernel's slope takes (k_slope.txt).
// kBWidth: the B tile's row as copied, 136 floats (the kernel's padding, which keeps the operand loads free of bank
// conflicts) or 128 (6% fewer of B's bytes, conflicting loads): whether the padding's bytes lengthen the loop; 0: four
// boxes of 32 floats, 128-byte swizzle, read as load_swizzled_operand does (unpadded, conflict-free).
// kBuffers 3: each tile's register operand is loaded two groups ahead instead of one, so that its loads have a whole
// group's time to land while the shared memory also serves the copies and the wgmmas' reads.
// kRows: the tile's rows of A (128, or 192 and 256 as the 192x128 and 256x128 variants), over 11 x kRows rows of A.
template <bool kPaired, bool kFrags, int kStages, int kBWidth = kBStride, int kBuffers = 2, int kRows = 128>
__global__ void __launch_bounds__(384, 1)
    mainloop_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, int k_tiles,
                    Counters* out, float* sink) {
  constexpr int kCluster = kPaired ? 2 : 1, kConsumerWarps = 8;
  constexpr std::uint32_t kABytes = kRows * 32 * 4, kBBytes = tensor_b_bytes(kBWidth);
  constexpr std::uint32_t kStageBytes = tensor_stage_bytes(kBWidth, kRows);
  extern __shared__ float4 shared_mem[];
  __shared__ __align__(8) std::uint64_t full[kStages], empty[kStages];
  const std::uint32_t raw = kernels::ptx::smem_address(shared_mem), base = aligned_base(shared_mem);
  const float* const smem = reinterpret_cast<const float*>(reinterpret_cast<const char*>(shared_mem) + (base - raw));
  const auto full_of = [&](int g) { return kernels::ptx::smem_address(&full[g % kStages]); };
  const auto empty_of = [&](int g) { return kernels::ptx::smem_address(&empty[g % kStages]); };
  const int tid = static_cast<int>(threadIdx.x);
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      pipe::mbarrier_init(full_of(s), 1);
      pipe::mbarrier_init(empty_of(s), kCluster * kConsumerWarps);
    }
    pipe::fence_barrier_init();
  }
  if constexpr (kPaired)
    kernels::cluster::sync();  // no copy or arrival reaches the peer's barriers before they are initialized
  else
    __syncthreads();
  const std::uint32_t rank = kPaired ? kernels::cluster::rank() : 0;
  const int row0 = static_cast<int>(blockIdx.x / 12) * kRows, col0 = static_cast<int>(blockIdx.x % 12) * 128;
  if (tid >= 256) {
    pipe::release_registers<40>();
    if (tid != 256) return;
    for (int g = 0; g < k_tiles; ++g) {
      if (g >= kStages) pipe::mbarrier_wait(empty_of(g), static_cast<std::uint32_t>(g / kStages - 1) & 1);
      const std::uint32_t stage = base + static_cast<std::uint32_t>(g % kStages) * kStageBytes;
      pipe::mbarrier_arrive_expect_tx(full_of(g), kABytes + kBBytes);
      const int k0 = 32 * (g % 256);
      if constexpr (kPaired)
        pipe::tma_multicast_2d(stage + rank * (kABytes / 2), map_a, full_of(g), k0,
                               row0 + static_cast<int>(rank) * (kRows / 2), std::uint16_t{3});
      else
        pipe::tma_load_2d(stage, map_a, full_of(g), k0, row0);
      if constexpr (kBWidth == 0) {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          pipe::tma_load_2d(stage + kABytes + 4096u * static_cast<std::uint32_t>(j), map_b, full_of(g), col0 + 32 * j,
                            k0);
      } else {
        pipe::tma_load_2d(stage + kABytes, map_b, full_of(g), col0, k0);
      }
    }
    // The peer's consumers arrive on this block's barriers until they are done with its last stages.
    for (int last = k_tiles > kStages ? k_tiles - kStages : 0; last < k_tiles; ++last)
      pipe::mbarrier_wait(empty_of(last), static_cast<std::uint32_t>(last / kStages) & 1);
    return;
  }
  pipe::claim_registers<232>();
  const int lane = tid % 32, first = kBWidth == 0 ? 0 : b_first<kBWidth>();
  kernels::RegisterOperand<false> frags[kBuffers];
  const auto fetch = [&](int g, auto buffer) {
    pipe::mbarrier_wait(full_of(g), static_cast<std::uint32_t>(g / kStages) & 1);
    if constexpr (!kFrags) {
      if (g >= kBuffers) return;  // every buffer holds a first operand, read again
    }
    const float* const tile_b = smem + ((g % kStages) * kStageBytes + kABytes) / 4;
    if constexpr (kBWidth == 0)
      load_swizzled_operand(frags[buffer], tile_b);
    else
      load_operand<kBWidth>(frags[buffer], tile_b + first);
  };
  const auto release = [&](int g) {
    __syncwarp();  // every lane's reads of the stage are done
    if constexpr (kPaired) {
      if (lane < kCluster)
        pipe::mbarrier_arrive_cluster(kernels::cluster::peer_address(empty_of(g), static_cast<std::uint32_t>(lane)));
    } else if (lane == 0) {
      pipe::mbarrier_arrive(empty_of(g));
    }
  };
  float acc[kRows / 2];
#pragma unroll
  for (int i = 0; i < kRows / 2; ++i) acc[i] = 0.f;
  const auto step = [&](int g, auto buffer) {
    const std::uint64_t desc =
        wg::sw128_kmajor_descriptor(base + static_cast<std::uint32_t>(g % kStages) * kStageBytes);
    kernels::issue_k_steps<kRows, false>(acc, frags[buffer], desc, desc);
    wg::wait_group<1>();  // group g - 1 is complete: its stage and operand buffer are free
    if (g > 0) release(g - 1);
    constexpr int kNext = (decltype(buffer)::value + kBuffers - 1) % kBuffers;  // group g - 1's buffer
    if (g + kBuffers - 1 < k_tiles) fetch(g + kBuffers - 1, std::integral_constant<int, kNext>{});
  };
  fetch(0, std::integral_constant<int, 0>{});
  if constexpr (kBuffers == 3) fetch(1, std::integral_constant<int, 1>{});
  const long long start = clock64(), start_ns = global_ns();
  if constexpr (kBuffers == 3)
    run_groups_of_three(acc, k_tiles, step);
  else
    run_groups(acc, k_tiles, step);
  release(k_tiles - 1);
  const long long cycles = clock64() - start, ns = global_ns() - start_ns;
  keep_alive(acc, sink);
  if (tid == 0) {
    out[blockIdx.x].cycles = cycles;
    out[blockIdx.x].ns = ns;
  }
}

// The SM clock a block's loop ran at, in MHz: its clock64 cycles over its global-timer nanoseconds.
double clock_mhz(const Counters& c) { return 1e3 * static_cast<double>(c.cycles) / static_cast<double>(c.ns); }

// One wave of mainloop_kernel on 11 x kRows rows of A: its operands, tensor maps, shared memory and cluster shape, set
// up once for run_mainloop and run_sustained.
template <bool kPaired, bool kFrags, int kStages, int kBWidth, int kBuffers, int kRows>
struct MainloopWave {
  static constexpr auto kKernel = mainloop_kernel<kPaired, kFrags, kStages, kBWidth, kBuffers, kRows>;
  static constexpr std::size_t kSmem = 1024 + std::size_t{kStages} * tensor_stage_bytes(kBWidth, kRows);
  WaveOperands operands;
  CUtensorMap map_a, map_b;
  kernels::KernelLaunch launch;

  MainloopWave(int sms, bool random)
      : operands(11 * kRows, random),
        map_a(operands.map_a(kPaired ? kRows / 2 : kRows, CU_TENSOR_MAP_L2_PROMOTION_L2_128B)),
        map_b(operands.map_b(32, kBWidth, CU_TENSOR_MAP_L2_PROMOTION_L2_128B)),
        launch(dim3(static_cast<unsigned>(sms)), dim3(kPaired ? 2u : 1u), 384, kSmem, nullptr) {
    GT_CUDA_CALL(cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSmem)));
  }
  void operator()(int k_tiles, Counters* out, float* sink) const {
    GT_CUDA_CALL(cudaLaunchKernelEx(&launch.config, kKernel, map_a, map_b, k_tiles, out, sink));
  }
};

template <bool kPaired, bool kFrags, int kStages, int kBWidth = kBStride, int kBuffers = 2, int kRows = 128>
void run_mainloop(int k_tiles, int sms) {
  const MainloopWave<kPaired, kFrags, kStages, kBWidth, kBuffers, kRows> wave(sms, false);
  const DeviceBuffer<Counters> out(static_cast<std::size_t>(sms));
  const DeviceBuffer<float> sink(static_cast<std::size_t>(sms));
  const std::vector<Counters> medians = median_blocks(out, sms, [&] { wave(k_tiles, out.get(), sink.get()); });
  const double cycles = cycles_per_k_tile(medians, k_tiles);
  std::vector<double> mhz;
  for (const Counters& c : medians) mhz.push_back(clock_mhz(c));
  std::printf(
      "k loop of %dx1536x8192's %dx128 tiles, %d stages, %-8s frags %-3s (%d buffers)  B rows of %3d%s  %8.1f "
      "cycles/k tile  %5.1f%% of the pipe  at %6.1f MHz\n",
      11 * kRows, kRows, kStages, kPaired ? "pairs: A" : "unicast", kFrags ? "on" : "off", kBuffers,
      kBWidth == 0 ? 128 : kBWidth, kBWidth == 0 ? " (4 swizzled boxes)" : "", cycles, 400.0 * kRows / cycles,
      median(mhz));
}

// The pairs' k loop of kRows x 128 tiles launched `launches` times back to back, as a sweep or a training loop keeps
// the GPU busy: per group of launches, the median block's SM clock (clock64 against the global timer) and cycles a k
// tile, so that what the 700 W cap does to the clock over seconds of tensor work shows.
template <int kRows>
void run_sustained(int k_tiles, int sms, int launches, bool random, int idle_ms = 0) {
  const MainloopWave<true, true, 4, kBStride, 2, kRows> wave(sms, random);
  const DeviceBuffer<Counters> out(static_cast<std::size_t>(sms) * static_cast<std::size_t>(launches));
  const DeviceBuffer<float> sink(static_cast<std::size_t>(sms));
  GT_CUDA_CALL(cudaMemset(out.get(), 0, sizeof(Counters) * out.size()));
  GT_CUDA_CALL(cudaDeviceSynchronize());
  std::this_thread::sleep_for(std::chrono::milliseconds(idle_ms));  // the board back near idle power first
  for (int i = 0; i < launches; ++i)
    wave(k_tiles, out.get() + static_cast<std::size_t>(i) * static_cast<std::size_t>(sms), sink.get());
  GT_CUDA_CALL(cudaGetLastError());
  GT_CUDA_CALL(cudaDeviceSynchronize());
  std::vector<Counters> host(out.size());
  GT_CUDA_CALL(cudaMemcpy(host.data(), out.get(), sizeof(Counters) * host.size(), cudaMemcpyDeviceToHost));
  const int per_row = std::max(1, launches / 16);
  std::printf(
      "# %dx128 pairs' k loop, %s operands, %d launches of %d k tiles back to back after %d ms idle, every %d-th "
      "launch:\n",
      kRows, random ? "random" : "constant", launches, k_tiles, idle_ms, per_row);
  double elapsed_ms = 0;
  for (int i = 0; i < launches; ++i) {
    std::vector<double> mhz, cycles, ns;
    for (int b = 0; b < sms; ++b) {
      const Counters& c =
          host[static_cast<std::size_t>(i) * static_cast<std::size_t>(sms) + static_cast<std::size_t>(b)];
      mhz.push_back(clock_mhz(c));
      cycles.push_back(static_cast<double>(c.cycles) / k_tiles);
      ns.push_back(static_cast<double>(c.ns));
    }
    elapsed_ms += median(ns) * 1e-6;
    if (i % per_row == 0 || i + 1 == launches)
      std::printf("launch %5d  after %8.1f ms of loops  %7.1f cycles/k tile  %5.1f%% of the pipe  at %6.1f MHz\n", i,
                  elapsed_ms, median(cycles), 400.0 * kRows / median(cycles), median(mhz));
  }
}

template <int N, int kConsumers, bool kFrags, bool kCopies>
void run_case(const DeviceBuffer<unsigned char>& set, std::size_t working, int k_tiles, int sms) {
  const auto kernel = rate_kernel<N, kConsumers, kFrags, kCopies>;
  GT_CUDA_CALL(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(Smem<N>::kTotal)));
  const DeviceBuffer<Counters> out(static_cast<std::size_t>(sms));
  const DeviceBuffer<float> sink(static_cast<std::size_t>(sms));
  const std::vector<Counters> medians = median_blocks(
      out, sms, [&] { kernel<<<sms, 384, Smem<N>::kTotal>>>(set.get(), working, k_tiles, out.get(), sink.get()); });
  std::vector<double> copy_rate;
  for (const Counters& c : medians)
    copy_rate.push_back(static_cast<double>(c.copy_bytes) / static_cast<double>(c.cycles));
  const double cycles = cycles_per_k_tile(medians, k_tiles);
  const double flop_per_clock = kConsumers * 4.0 * 2 * 64 * N * 8 / cycles;
  std::printf(
      "m64n%-3d  consumers %d  frags %-3s  copies %-3s  %8.1f cycles/k tile  %7.1f FLOP/clk/SM  %5.1f%%  "
      "copies %5.1f B/clk/SM\n",
      N, kConsumers, kFrags ? "on" : "off", kCopies ? "on" : "off", cycles, flop_per_clock,
      100.0 * flop_per_clock / 2048.0, median(copy_rate));
}

template <int N>
void run_shape(const DeviceBuffer<unsigned char>& set, std::size_t working, int k_tiles, int sms) {
  run_case<N, 1, false, false>(set, working, k_tiles, sms);
  run_case<N, 2, false, false>(set, working, k_tiles, sms);
  run_case<N, 2, true, false>(set, working, k_tiles, sms);
  run_case<N, 2, false, true>(set, working, k_tiles, sms);
  run_case<N, 2, true, true>(set, working, k_tiles, sms);
}

int run(int argc, char** argv) {
  const int k_tiles = argc > 1 ? std::atoi(argv[1]) : 4096;
  if (k_tiles < 2 || k_tiles % 2 != 0)
    throw InputError(
        "K_TILES must be an even number >= 2 (usage: wgmma_rate_probe [K_TILES] "
        "[tensor|quads|mainloop|sustained|bursts])");
  const std::string mode = argc == 3 ? argv[2] : "";
  if (argc > 3 || (argc == 3 && mode != "tensor" && mode != "quads" && mode != "mainloop" && mode != "sustained" &&
                   mode != "bursts"))
    throw InputError("usage: wgmma_rate_probe [K_TILES] [tensor|quads|mainloop|sustained|bursts]");
  const bool tensor_only = mode == "tensor", quads_only = mode == "quads", mainloop_only = mode == "mainloop";
  const bool sustained_only = mode == "sustained", bursts_only = mode == "bursts";
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each line out as it is measured, should a case hang
  int device = 0, sms = 0, major = 0;
  GT_CUDA_CALL(cudaGetDevice(&device));
  GT_CUDA_CALL(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  GT_CUDA_CALL(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major != 9) throw NoGpuError("wgmma_rate_probe needs a compute capability 9.0 GPU");
  const std::size_t working = std::size_t{16} << 20;  // L2-resident
  const DeviceBuffer<unsigned char> set(working);
  GT_CUDA_CALL(cudaMemset(set.get(), 0x3c, working));
  std::printf("# %d SMs, %d k tiles a block\n", sms, k_tiles);
  if (mode.empty()) {
    run_shape<64>(set, working, k_tiles, sms);
    run_shape<128>(set, working, k_tiles, sms);
    run_shape<192>(set, working, k_tiles, sms);
    run_shape<256>(set, working, k_tiles, sms);
    run_delivery<4, false, false>(set, working, k_tiles, sms);
    run_delivery<4, true, false>(set, working, k_tiles, sms);
    run_delivery<6, false, false>(set, working, k_tiles, sms);
    run_delivery<6, true, false>(set, working, k_tiles, sms);
    run_delivery<2, true, false>(set, working, k_tiles, sms);
    run_delivery<3, true, false>(set, working, k_tiles, sms);
    run_delivery<4, false, true>(set, working, k_tiles, sms);
    run_delivery<4, true, true>(set, working, k_tiles, sms);
    run_delivery<6, true, true>(set, working, k_tiles, sms);
    if (sms == 132) {  // one wave of 1408x1536's tiles
      run_delivery<4, false, true, true>(set, working, k_tiles, sms);
      run_delivery<4, true, true, true>(set, working, k_tiles, sms);
    }
  }
  // What follows is one wave of 1408x1536's 132 tiles.
  if (sms != 132) {
    if (!mode.empty())
      throw InputError("the tensor copies are one wave of 1408x1536's 132 tiles, and this GPU has " +
                       std::to_string(sms) + " SMs");
    return 0;
  }
  if (bursts_only) {
    run_sustained<128>(k_tiles, sms, 40, true, 3000);
    run_sustained<192>(k_tiles, sms, 40, true, 3000);
    run_sustained<256>(k_tiles, sms, 40, true, 3000);
    run_sustained<256>(k_tiles, sms, 40, false, 3000);
    return 0;
  }
  if (sustained_only) {
    run_sustained<256>(k_tiles, sms, 1500, false);
    run_sustained<256>(k_tiles, sms, 1500, true);
    return 0;
  }
  if (mainloop_only) {
    run_tensor_delivery<true, 256>(k_tiles, sms, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
    run_mainloop<true, true, 4>(k_tiles, sms);
    run_mainloop<true, false, 4>(k_tiles, sms);
    run_mainloop<false, true, 4>(k_tiles, sms);
    run_mainloop<true, true, 6>(k_tiles, sms);
    run_mainloop<true, false, 4, 128>(k_tiles, sms);
    run_mainloop<true, true, 4, 128>(k_tiles, sms);
    run_mainloop<true, false, 4, 0>(k_tiles, sms);
    run_mainloop<true, true, 4, 0>(k_tiles, sms);
    run_mainloop<false, true, 4, 0>(k_tiles, sms);
    run_mainloop<true, true, 6, 0, 3>(k_tiles, sms);
    run_mainloop<true, true, 4, kBStride, 2, 256>(k_tiles, sms);
    run_mainloop<true, false, 4, kBStride, 2, 256>(k_tiles, sms);
    run_mainloop<true, true, 4, 0, 2, 256>(k_tiles, sms);
    run_mainloop<true, false, 4, 0, 2, 256>(k_tiles, sms);
    run_mainloop<false, true, 4, kBStride, 2, 256>(k_tiles, sms);
    run_mainloop<false, true, 4, 0, 2, 256>(k_tiles, sms);
    run_mainloop<true, true, 4, kBStride, 2, 192>(k_tiles, sms);
    run_mainloop<true, true, 4, 0, 2, 192>(k_tiles, sms);
    return 0;
  }
  if (quads_only) {
    run_tensor_delivery<true, 256>(k_tiles, sms, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
    run_tensor_delivery<true, 256, false, false, 1>(k_tiles, sms, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
    run_tensor_delivery<true, 256, false, false, 2>(k_tiles, sms, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
    run_tensor_delivery<true, 32, false, false, 2>(k_tiles, sms, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
    return 0;
  }
  run_tensor_delivery<false, 256>(k_tiles, sms);
  run_tensor_delivery<true, 256>(k_tiles, sms);
  run_tensor_delivery<false, 32>(k_tiles, sms);
  run_tensor_delivery<true, 32>(k_tiles, sms);
  run_tensor_delivery<true, 256, true>(k_tiles, sms);
  run_tensor_delivery<true, 32, true>(k_tiles, sms);
  for (const CUtensorMapL2promotion promotion :
       {CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_64B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B}) {
    run_tensor_delivery<false, 256>(k_tiles, sms, promotion);
    run_tensor_delivery<true, 256>(k_tiles, sms, promotion);
    run_tensor_delivery<true, 256, true>(k_tiles, sms, promotion);
  }
  run_tensor_delivery<false, 256, false, true>(k_tiles, sms, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  run_tensor_delivery<true, 256, false, true>(k_tiles, sms, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  return 0;
}

}  // namespace
}  // namespace gemmtune

int main(int argc, char** argv) {
  try {
    return gemmtune::run(argc, argv);
  } catch (const gemmtune::Error& e) {
    std::fprintf(stderr, "wgmma_rate_probe: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wgmma_rate_probe: %s\n", e.what());
    return 1;
  }
}
