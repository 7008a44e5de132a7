// The few PTX instructions the kernel families need that CUDA C++ does not spell: cp.async, ldmatrix, tf32 mma.
#pragma once

#include <cstdint>

namespace gemmtune::kernels::ptx {

__device__ __forceinline__ std::uint32_t smem_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Which way a 16-byte async copy goes. Around L1 (.cg) by default: GEMM tiles are reused from L2, not L1. Through L1
// (.ca) where a kernel measured faster so. Around L1, a skinny tile streaming B asked L2 for 1.5-2x the sectors DRAM
// delivered (ncu, H200, 4×50257×4096: 24-31 sectors per warp copy of 512 bytes), through L1 once each; a bare panel
// stream of that 823 MB matrix ran at 82.0-88.6% of 4.8 TB/s around L1 and 91.4-91.9% through it
// (results/nvidia-h200/panel_stream_probe.txt). In the GEMM kernels it is a per-tile matter (kernels/skinny_gemm.cu).
enum class CopyPath { BypassL1, ThroughL1 };

// 16-byte async copy global → shared; only the first src_bytes (0..16) are read, the rest of dst is zero-filled, so
// edge tiles load zeros without reading past the operand.
template <CopyPath kPath = CopyPath::BypassL1>
__device__ __forceinline__ void cp_async_16(void* dst, const void* src, int src_bytes) {
  if constexpr (kPath == CopyPath::ThroughL1)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(dst)), "l"(src), "r"(src_bytes));
  else
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(dst)), "l"(src), "r"(src_bytes));
}

// 8-byte async copy for operands whose rows are 8- but not 16-byte aligned (an even leading dimension).
__device__ __forceinline__ void cp_async_8(void* dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(smem_address(dst)), "l"(src));
}

// 4-byte async copy for operands whose rows are not 16-byte aligned; src_bytes is 0 (zero-fill) or 4.
__device__ __forceinline__ void cp_async_4(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_address(dst)), "l"(src), "r"(src_bytes));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

// Four 8×8 b16 matrices = four 8-row × 4-float tiles: thread i receives word i%4 of row i/4 of each, which is exactly
// the (groupID, threadID_in_group) element of an m16n8k8 tf32 A fragment or a pair of B fragments.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(row_address)));
}

// fp32 → tf32 operand, rounded to nearest (ties away from zero), in one integer add: the tensor core reads only the top
// 19 bits of a tf32 operand, so adding half a tf32 ulp (bit 12) is the whole rounding. cvt.rna.tf32.f32 costs a
// compare and a predicated add per element on sm_90, and that ALU work, not the mma, bounded the tf32 kernels. The
// 13 low bits are left behind (mma ignores them); to_tf32_exact() clears them where the exact value is needed. A NaN
// whose payload lies only in those 13 bits becomes an infinity: still non-finite.
__device__ __forceinline__ std::uint32_t to_tf32(float x) { return __float_as_uint(x) + 0x1000u; }
__device__ __forceinline__ std::uint32_t to_tf32_exact(float x) { return to_tf32(x) & 0xffffe000u; }

// D = A·B + D for one m16n8k8 tile, tf32 inputs, fp32 accumulators.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Programmatic dependent launch (KernelLaunch's behind_previous, sm_90): a kernel launched so waits here until the
// kernel before it has finished and its writes are visible; launched otherwise, it does not wait.
__device__ __forceinline__ void wait_for_previous_grid() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// Lets a kernel launched behind this one start its blocks once every block of this one has got here, instead of
// after this one's last block has finished.
__device__ __forceinline__ void let_next_grid_start() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::);
#endif
}

}  // namespace gemmtune::kernels::ptx
