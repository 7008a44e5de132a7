// SplitKScratchBuffer: device memory for one split-k variant's launches of one problem shape, tickets zeroed once.
// Callers that already own a large workspace (the runtime, the tuner's launchers) may lend it for the partials.
#pragma once

#include <cstddef>

#include "cuda/device_buffer.hpp"
#include "kernels/compiled_variant.hpp"
#include "problem/gemm_problem.hpp"

namespace gemmtune::kernels {

struct KernelVariant;

class SplitKScratchBuffer {
 public:
  SplitKScratchBuffer() = default;
  // Allocates partials of the size v needs for p, unless `lent_partials` (lent_floats long) is large enough.
  SplitKScratchBuffer(const KernelVariant& v, const GemmProblem& p, float* lent_partials = nullptr,
                      std::size_t lent_floats = 0);

  // What launch() takes; empty (all null) for an unsplit variant.
  const SplitKScratch& view() const { return view_; }

 private:
  DeviceBuffer<float> partials_;
  DeviceBuffer<unsigned> tickets_;
  SplitKScratch view_;
};

}  // namespace gemmtune::kernels
