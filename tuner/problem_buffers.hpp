// ProblemBuffers: the device tensors one problem is verified and timed on.
//
// Inputs come in several rotating sets whose total size exceeds 2× L2, so back-to-back timed calls read their
// operands from DRAM as a real program's would, instead of timing a warm cache (DEVICE.md anchors use 4 sets).
#pragma once

#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "cuda/device_buffer.hpp"
#include "problem/gemm_problem.hpp"

namespace gemmtune {

class ProblemBuffers {
 public:
  // Fills every input set with fresh uniform values in [-1, 1) drawn from `seed`.
  ProblemBuffers(const GemmProblem& p, std::size_t l2_bytes, std::uint64_t seed, cudaStream_t s);

  int sets() const { return static_cast<int>(a_.size()); }
  // Operands of input set i (modulo sets()); all sets share the outputs.
  GemmOperands operands(int i) const;
  void poison_outputs(cudaStream_t s) const;

  std::size_t y_count() const { return y_.size(); }
  const float* y() const { return y_.get(); }
  const float* z() const { return z_.get(); }

  static constexpr int kMaxSets = 64;  // small problems stay L2-resident anyway; this bounds the allocations

 private:
  GemmProblem problem_;
  std::uint64_t seed_;
  std::vector<DeviceBuffer<float>> a_, b_, bias_;
  DeviceBuffer<float> y_, z_;
};

}  // namespace gemmtune
