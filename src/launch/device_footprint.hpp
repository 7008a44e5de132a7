// How much GPU memory a problem needs before any of it is allocated, so a problem that cannot fit is refused up
// front (exit 2, with the bytes needed and free) instead of failing inside cudaMalloc as an internal error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "problem/gemm_problem.hpp"

namespace gemmtune {

// How many rotating input sets ProblemBuffers allocates: enough that their total exceeds 2x L2 (so timed calls read
// DRAM), at most ProblemBuffers::kMaxSets. l2_bytes 0 gives one set.
int input_set_count(const GemmProblem& gemm, std::size_t l2_bytes);

// Bytes ProblemBuffers and the Verifier of `gemm` (the GEMM a pass runs, problem/pass_gemm.hpp) allocate with
// `input_sets` input sets: A, B and bias per set, Y and Z once, the fp64 reference Y and Z; plus `workspace_bytes`
// of library workspace. Saturates at UINT64_MAX rather than wrapping for absurd shapes.
std::uint64_t verify_and_time_bytes(const GemmProblem& gemm, int input_sets, std::size_t workspace_bytes);

// Bytes `gemmtune run --backward` allocates for the gradients beside the forward's buffers: gY, gA, gB, gBias.
std::uint64_t backward_gradient_bytes(const GemmProblem& forward);

// "1.50 GiB (1610612736 bytes)"
std::string describe_bytes(std::uint64_t bytes);

// Throws InputError "<what> needs N of GPU memory, but only M are free on device D" when needed_bytes exceeds what
// cudaMemGetInfo reports free on the current device.
void require_device_memory(std::uint64_t needed_bytes, const std::string& what);

}  // namespace gemmtune
