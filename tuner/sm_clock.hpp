// The SM clock the GPU actually runs at, measured on the device: a throttled GPU is told from a slow candidate.
#pragma once

#include <cuda_runtime_api.h>

namespace gemmtune {

// Spins one block for about `duration_us` and returns SM clock cycles per microsecond (MHz) from clock64 against
// the global timer. Synchronizes s.
double measure_sm_clock_mhz(cudaStream_t s, unsigned duration_us = 200);

}  // namespace gemmtune
