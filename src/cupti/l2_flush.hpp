// L2Flush: evicts the GPU's L2 by reading a buffer twice its size, so the next kernel starts with a cold cache.
//
// Reads, not writes: a memset would leave the L2 full of dirty lines whose write-back then lands inside the
// next measured range and is counted as that range's DRAM writes.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

#include "cuda/device_buffer.hpp"

namespace gemmtune {

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
