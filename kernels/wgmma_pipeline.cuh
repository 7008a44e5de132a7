// The pieces of a warp-specialized Hopper pipeline (sm_90): shared-memory mbarriers that hand stages between a
// producer warp and the consumer warpgroups, and the bulk tensor copy (TMA) that fills a stage and signals its barrier.
//
// Source for the instructions: PTX ISA "mbarrier" (arrive, expect-tx, try_wait.parity and phases) and
// "cp.async.bulk.tensor" (tile mode, completion through mbarrier::complete_tx::bytes).
#pragma once

#include <cuda.h>

#include <cstdint>

namespace gemmtune::kernels::pipeline {

__device__ __forceinline__ void mbarrier_init(std::uint32_t barrier, std::uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(barrier), "r"(arrivals) : "memory");
}

// Makes initialized barriers visible to the async proxy (the copy engine completes transactions on them); a block
// barrier must still follow before other threads use them.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

__device__ __forceinline__ void mbarrier_arrive(std::uint32_t barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(barrier) : "memory");
}

// One arrival that also announces `bytes` of copies the current phase must see land before it completes.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint32_t barrier, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(barrier), "r"(bytes) : "memory");
}

// Returns once the barrier's phase of the given parity (0 for its 1st, 3rd, ... phase) has completed.
__device__ __forceinline__ void mbarrier_wait(std::uint32_t barrier, std::uint32_t parity) {
  std::uint32_t done;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(barrier), "r"(parity)
        : "memory");
  } while (done == 0);
}

// A barrier among the first kThreads threads of the block only (named barrier 1; __syncthreads uses 0), for warps that
// must meet while others of the block are elsewhere.
template <int kThreads>
__device__ __forceinline__ void sync_first_threads() {
  asm volatile("bar.sync 1, %0;\n" ::"n"(kThreads) : "memory");
}

// Moves registers between warpgroups (sm_90a): a warpgroup lowers its own cap so that others can raise theirs. Every
// warp of the warpgroup executes the same one; the kernel needs a register cap at entry (__launch_bounds__ with
// a minimum of 1 block).
template <int kRegisters>
__device__ __forceinline__ void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}
template <int kRegisters>
__device__ __forceinline__ void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

// An arrival on a barrier of any block of the cluster (an address from cluster::peer_address). Default semantics,
// release at CTA scope, as CUTLASS's cluster barriers use: it only has to follow this warp's reads of the stage. A
// cluster-scope release sat on the consumers' critical path and made every k tile ~1000 cycles longer when tried.
__device__ __forceinline__ void mbarrier_arrive_cluster(std::uint32_t remote_barrier) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote_barrier) : "memory");
}

// Copies the box at (x, y) (x along the contiguous dimension) of a 2-D tensor map into shared memory at `dst`, in
// the map's swizzle, and completes its bytes on `barrier`. Elements outside the tensor arrive as zeros.
__device__ __forceinline__ void tma_load_2d(std::uint32_t dst, const CUtensorMap& map, std::uint32_t barrier, int x,
                                            int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::
          "r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(barrier), "r"(x), "r"(y)
      : "memory");
}

// tma_load_2d into every block of the cluster whose bit is set in cta_mask, at the same shared-memory offset in each,
// completing the bytes on each one's barrier at the offset of `barrier`.
__device__ __forceinline__ void tma_multicast_2d(std::uint32_t dst, const CUtensorMap& map, std::uint32_t barrier,
                                                 int x, int y, std::uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(barrier), "r"(x), "r"(y), "h"(cta_mask)
      : "memory");
}

// A barrier among the 128 threads of one warpgroup (named barrier 2 + warpgroup; 0 and 1 are taken above).
__device__ __forceinline__ void sync_warpgroup(int warpgroup) {
  asm volatile("bar.sync %0, 128;\n" ::"r"(2 + warpgroup) : "memory");
}

// Copies the box at (x, y) of a 2-D tensor map from shared memory at `src` (in the map's swizzle) to global memory;
// parts of the box outside the tensor are not written. Completes in bulk groups (commit, wait below), not on a barrier.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap& map, std::uint32_t src, int x, int y) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(&map)),
               "r"(src), "r"(x), "r"(y)
               : "memory");
}

__device__ __forceinline__ void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }

// Returns once at most kPending of this thread's committed bulk groups still have shared memory to read: the source
// of the older ones may be overwritten. (Their global writes may still be in flight.)
template <int kPending>
__device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}

}  // namespace gemmtune::kernels::pipeline
