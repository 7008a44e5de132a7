// LaunchScratchBuffer: device memory for one variant's launches of one problem shape: split-k partials and tickets
// (zeroed once), and a staged variant's operand copies. Callers that already own a large workspace (the runtime, the
// tuner's launchers) may lend it for the partials and the copies.
#pragma once

#include <cstddef>

#include "cuda/device_buffer.hpp"
#include "kernels/compiled_variant.hpp"
#include "problem/gemm_problem.hpp"

namespace gemmtune::kernels {

struct KernelVariant;

// Where v's launches for p keep their scratch: partials then staged copies in `floats` (v.scratch_floats(p) of them),
// or, where `staging` is given (v.staging_floats(p) of it), the partials alone in `floats` and the copies there,
// and v.split_k_tickets(p) tickets, zero before the first launch (kernels leave them at zero). The runtime keeps such
// scratch per stream and places it at each launch; LaunchScratchBuffer places its own once.
LaunchScratch place_launch_scratch(const KernelVariant& v, const GemmProblem& p, float* floats, unsigned* tickets,
                                   float* staging = nullptr);

class LaunchScratchBuffer {
 public:
  LaunchScratchBuffer() = default;
  // Allocates the partials and copies v needs for p (KernelVariant::scratch_floats), unless `lent` (lent_floats long)
  // holds them.
  LaunchScratchBuffer(const KernelVariant& v, const GemmProblem& p, float* lent = nullptr, std::size_t lent_floats = 0);

  // What launch() takes; empty (all null) for a variant that is neither split nor staged.
  const LaunchScratch& view() const { return view_; }

 private:
  DeviceBuffer<float> floats_;  // partials, then the staged copies; empty when lent
  DeviceBuffer<unsigned> tickets_;
  LaunchScratch view_;
};

}  // namespace gemmtune::kernels
