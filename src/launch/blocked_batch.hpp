// One timed batch behind the blocking kernel, as the developer probes time theirs: `calls` calls queued while the
// stream is held, CUDA events around them, so host launch latency stays out of the time.
#pragma once

#include <cuda_runtime_api.h>

#include "common/error.hpp"
#include "cuda/cuda_call.hpp"
#include "cuda/stream.hpp"
#include "launch/blocking_kernel.hpp"

namespace gemmtune {

// Per-call microseconds of launch(0) .. launch(calls - 1) on s. Every kernel they launch must have run once already
// (launch/blocking_kernel.hpp: why). Throws CheckError where the blocking kernel timed out: the batch waited for the GPU.
template <class Launch>
double blocked_batch_us(BlockingKernel& blocker, const CudaEvent& start, const CudaEvent& stop, cudaStream_t s,
                        int calls, Launch&& launch) {
  blocker.block(s);
  start.record(s);
  for (int i = 0; i < calls; ++i) launch(i);
  stop.record(s);
  blocker.release();
  GT_CUDA_CALL(cudaStreamSynchronize(s));
  if (blocker.timed_out()) throw CheckError("the blocking kernel timed out: the batch waited for the GPU");
  return 1e3 * static_cast<double>(stop.elapsed_ms_since(start)) / calls;
}

}  // namespace gemmtune
