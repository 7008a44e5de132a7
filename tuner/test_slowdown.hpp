// A test-only switch that makes one candidate family really slower, to prove the regression gate catches it.
// Active only in a build configured with -DGEMMTUNE_TEST_SLOWDOWN=<own|lt>:<percent>; a normal build never spins.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "problem/candidate.hpp"

namespace gemmtune {

// The percentage by which calls of this candidate's backend are slowed in this build (0 in normal builds).
double test_slowdown_pct(const Candidate& c);
// Enqueues a kernel that spins for `ns` nanoseconds: extra GPU time inside the timed call.
void launch_spin_ns(std::uint64_t ns, cudaStream_t s);

}  // namespace gemmtune
