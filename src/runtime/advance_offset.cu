// Runtime::advance_offset: the device-side dropout step counter's increment, a kernel so that a CUDA graph captures it.
// A memcpy or memset node could only write a value fixed at capture; the graph must add to what the device holds.
#include "gemmtune/runtime.hpp"

#include "common/error.hpp"
#include "cuda/cuda_call.hpp"

namespace gemmtune {
namespace {

__global__ void advance_offset_kernel(std::uint64_t* offset, std::uint64_t increment) { *offset += increment; }

}  // namespace

void Runtime::advance_offset(std::uint64_t* offset_ptr, std::uint64_t increment, cudaStream_t s) {
  if (offset_ptr == nullptr) throw InputError("advance_offset needs the device pointer of the dropout offset");
  advance_offset_kernel<<<1, 1, 0, s>>>(offset_ptr, increment);
  GT_CUDA_CHECK_LAUNCH();
}

}  // namespace gemmtune
