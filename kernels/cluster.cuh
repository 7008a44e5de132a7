// Thread-block clusters (sm_90): a block's rank in its cluster, the address of a shared variable in another block of
// the cluster (distributed shared memory), loads from it, and the cluster-wide barrier.
//
// Source for the instructions: PTX ISA "mapa", "ld" with the .shared::cluster state space, and "barrier.cluster".
#pragma once

#include <cstdint>

namespace gemmtune::kernels::cluster {

__device__ __forceinline__ std::uint32_t rank() {
  std::uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

// The shared::cluster address of the variable at shared::cta address `local` in the block of rank `block_rank`.
__device__ __forceinline__ std::uint32_t peer_address(std::uint32_t local, std::uint32_t block_rank) {
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local), "r"(block_rank));
  return remote;
}

__device__ __forceinline__ float4 load_float4(std::uint32_t address) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(address)
               : "memory");
  return v;
}

// Every thread of every block of the cluster meets here; shared-memory writes before it are visible to all of them
// after it (release/acquire at cluster scope).
__device__ __forceinline__ void sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

}  // namespace gemmtune::kernels::cluster
