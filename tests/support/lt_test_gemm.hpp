// LtTestGemm: a real cuBLASLt GEMM (the heuristic's first algo) on fresh random inputs, for GPU tests that need a
// representative call to profile or time rather than a particular result.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "cuda/device_buffer.hpp"
#include "lt/lt_gemm.hpp"

namespace gemmtune::test {

class LtTestGemm {
 public:
  LtTestGemm(const GemmProblem& p, std::uint32_t seed);
  // Enqueues one call on s; it overwrites Y, so repeated calls are idempotent.
  void run(cudaStream_t s) const;
  const Candidate& candidate() const { return candidate_; }

 private:
  LtHandle handle_;
  LtGemm gemm_;
  Candidate candidate_;
  cublasLtMatmulAlgo_t algo_{};
  DeviceBuffer<float> a_, b_, y_;
  DeviceBuffer<unsigned char> workspace_;
};

}  // namespace gemmtune::test
