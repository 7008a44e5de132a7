// tma_box_start_probe: can the copy engine start a box at a column that is not 16 bytes into a row (issue 49)?
//
// Wherever k % 4 != 0 the TMA kernels copy A into aligned scratch first (1.20x the aligned twin's time on seed 9716's
// shapes, results/nvidia-h200/unaligned_vs_aligned_seed9716.json). The rows r = j (mod 4) of a row-major m x k
// matrix lie 4k floats apart, a multiple of 16 bytes, and row j starts j·k floats after row 0. So a map per class j
// with the matrix's own aligned base, rows of 4k floats and j·k + k columns would address class j's k tile k0 as the
// box at x = j·k + k0, unshifted, with its columns past k outside the map (zero-filled) rather than in the next row:
// A read in place, in the layout wgmma reads, with no copy. cuTensorMapEncodeTiled accepts such maps (base and
// strides are aligned); whether the copy engine takes box starts that are not is what this probe asks.
//
//   tma_box_start_probe
//
// Per k, both swizzles: every 32x32 box of every class of a 1001 x k matrix holding its element index + 1, each
// float checked against the matrix (0 past its rows or k). k = 1544 puts every box start on a 16-byte boundary; k =
// 1543 does not for classes 1-3. An illegal-instruction fault ends the CUDA context: the probe reports it and stops.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "cuda/cuda_call.hpp"
#include "cuda/device_buffer.hpp"
#include "kernels/ptx.cuh"
#include "kernels/tma_operand.cuh"
#include "kernels/wgmma_gemm.cuh"
#include "kernels/wgmma_pipeline.cuh"

namespace gemmtune {
namespace {

namespace pipe = kernels::pipeline;

struct ClassMaps {
  CUtensorMap map[4];
  int k;
};

// The class is a compile-time index, as the kernels index their maps. One block a box: element (r, c) of class j's box
// at (j·k + k0, i0) must be A[4(i0 + r) + j][k0 + c].
template <int kClass, bool kSwizzled>
__global__ void __launch_bounds__(128) box_check_kernel(const __grid_constant__ ClassMaps maps, const float* a, int m,
                                                        int boxes_x, unsigned long long* mismatches) {
  extern __shared__ float4 shared_mem[];
  __shared__ __align__(8) std::uint64_t landed;
  const std::uint32_t raw = kernels::ptx::smem_address(shared_mem), base = (raw + 1023) & ~1023u;
  const float* const box = reinterpret_cast<const float*>(shared_mem) + (base - raw) / 4;
  const std::uint32_t barrier = kernels::ptx::smem_address(&landed);
  const int k = maps.k, k0 = 32 * (static_cast<int>(blockIdx.x) % boxes_x);
  const int i0 = 32 * (static_cast<int>(blockIdx.x) / boxes_x);
  if (threadIdx.x == 0) {
    pipe::mbarrier_init(barrier, 1);
    pipe::fence_barrier_init();
    pipe::mbarrier_arrive_expect_tx(barrier, 32 * 32 * 4);
    pipe::tma_load_2d(base, maps.map[kClass], barrier, kClass * k + k0, i0);
  }
  __syncthreads();
  pipe::mbarrier_wait(barrier, 0);
  for (int e = static_cast<int>(threadIdx.x); e < 32 * 32; e += static_cast<int>(blockDim.x)) {
    const int r = e / 32, c = e % 32, row = 4 * (i0 + r) + kClass, col = k0 + c;
    const float want = row < m && col < k ? a[static_cast<std::int64_t>(row) * k + col] : 0.f;
    if (box[kSwizzled ? kernels::swizzle_128b_offset(r, c) : 32 * r + c] != want) atomicAdd(mismatches, 1ull);
  }
}

// Returns false once the copy engine has faulted (the context is gone).
template <bool kSwizzled>
bool check_boxes(std::int64_t m, std::int64_t k) {
  std::vector<float> host(static_cast<std::size_t>(m * k));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i + 1);  // exact: m·k < 2^24
  const DeviceBuffer<float> a(host.size());
  GT_CUDA_CALL(cudaMemcpy(a.get(), host.data(), sizeof(float) * host.size(), cudaMemcpyHostToDevice));
  ClassMaps maps{};
  for (int j = 0; j < 4; ++j)
    maps.map[j] = kernels::tensor_map_2d(a.get(), (m - j + 3) / 4, j * k + k, 4 * k, 32, 32,
                                         kSwizzled ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE);
  maps.k = static_cast<int>(k);
  const DeviceBuffer<unsigned long long> mismatches(1);
  GT_CUDA_CALL(cudaMemset(mismatches.get(), 0, sizeof(unsigned long long)));
  const int boxes_x = static_cast<int>((k + 31) / 32);
  const char* const swizzle = kSwizzled ? "128-byte swizzle" : "unswizzled";
  for (int j = 0; j < 4; ++j) {
    const int boxes_y = static_cast<int>(((m - j + 3) / 4 + 31) / 32);
    const auto kernel = j == 0   ? box_check_kernel<0, kSwizzled>
                        : j == 1 ? box_check_kernel<1, kSwizzled>
                        : j == 2 ? box_check_kernel<2, kSwizzled>
                                 : box_check_kernel<3, kSwizzled>;
    kernel<<<boxes_x * boxes_y, 128, 1024 + 32 * 32 * 4>>>(maps, a.get(), static_cast<int>(m), boxes_x,
                                                           mismatches.get());
    const cudaError_t launched = cudaGetLastError();
    const cudaError_t done = launched != cudaSuccess ? launched : cudaDeviceSynchronize();
    if (done != cudaSuccess) {
      std::printf("%lldx%lld, %s, class %d (its first box at x = %lld, %lld bytes into a 16-byte unit): %s\n",
                  static_cast<long long>(m), static_cast<long long>(k), swizzle, j, static_cast<long long>(j * k),
                  static_cast<long long>(j * k % 4 * 4), cudaGetErrorString(done));
      return false;
    }
  }
  unsigned long long bad = 0;
  GT_CUDA_CALL(cudaMemcpy(&bad, mismatches.get(), sizeof bad, cudaMemcpyDeviceToHost));
  std::printf("%lldx%lld, %s: 4 classes of 32x32 boxes landed, %llu of %lld floats mismatched\n",
              static_cast<long long>(m), static_cast<long long>(k), swizzle, bad, static_cast<long long>(m * k));
  return true;
}

int run() {
  int device = 0, major = 0;
  GT_CUDA_CALL(cudaGetDevice(&device));
  GT_CUDA_CALL(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 9) throw NoGpuError("tma_box_start_probe needs the copy engine of a compute capability 9.0 GPU");
  constexpr std::int64_t kM = 1001;
  if (!check_boxes<true>(kM, 1544) || !check_boxes<false>(kM, 1544)) return 1;
  if (check_boxes<false>(kM, 1543)) check_boxes<true>(kM, 1543);
  return 0;
}

}  // namespace
}  // namespace gemmtune

int main() {
  try {
    return gemmtune::run();
  } catch (const gemmtune::Error& e) {
    std::fprintf(stderr, "tma_box_start_probe: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tma_box_start_probe: %s\n", e.what());
    return 1;
  }
}
