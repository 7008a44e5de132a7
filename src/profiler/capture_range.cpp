#include "profiler/capture_range.hpp"

#include <cuda_profiler_api.h>

#include "cuda/cuda_call.hpp"

namespace gemmtune {

ProfilerCaptureRange::ProfilerCaptureRange() { GT_CUDA_CALL(cudaProfilerStart()); }

// A destructor must not throw; a failed stop only leaves the capture open until the process ends.
ProfilerCaptureRange::~ProfilerCaptureRange() { cudaProfilerStop(); }

}  // namespace gemmtune
