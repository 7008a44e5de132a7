// L2Flush: evicts the GPU's L2 by reading a buffer twice its size, so the next kernel starts with a cold cache.
//
// Reads, not writes: a memset would leave the L2 full of dirty lines whose write-back then lands inside the
// next measured range and is counted as that range's DRAM writes.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

#include "cuda/device_buffer.hpp"

namespace gemmtune {

// Enqueues reads of every 16-byte unit of `data` (`bytes` long, 16-byte aligned) on s; `sink` (one int of device
// memory) keeps the reads from being optimized away. Over 2× L2 or more, the last reads evict the first ones.
void read_to_evict_l2(const void* data, std::size_t bytes, int* sink, cudaStream_t s);

// Enqueues a load and a store of the same value for every 16-byte unit of `data` on s: L2 is evicted as by the reads
// above, and left full of dirty lines, as a program's is after the kernels before a call wrote their outputs. The next
// kernel's misses then write those lines back, and kernels differ in what that costs them (first-use trial: trial_gpu).
void rewrite_to_evict_l2(void* data, std::size_t bytes, cudaStream_t s);

class L2Flush {
 public:
  explicit L2Flush(std::size_t l2_bytes);
  // Enqueues the eviction on s.
  void run(cudaStream_t s) const;

 private:
  DeviceBuffer<int4> buffer_;
  DeviceBuffer<int> sink_;
};

}  // namespace gemmtune
