#include "kernels/launch_scratch.hpp"

#include "kernels/registry.hpp"

namespace gemmtune::kernels {

LaunchScratchBuffer::LaunchScratchBuffer(const KernelVariant& v, const GemmProblem& p, float* lent,
                                         std::size_t lent_floats) {
  const std::size_t floats = v.scratch_floats(p);
  if (floats == 0) return;
  float* base = lent;
  if (!lent || lent_floats < floats) {
    floats_ = DeviceBuffer<float>(floats);
    base = floats_.get();
  }
  view_.partial_floats = v.split_k_partial_floats(p);
  if (view_.partial_floats > 0) view_.partials = base;
  view_.staging_floats = v.staging_floats(p);
  if (view_.staging_floats > 0) view_.staging = base + KernelVariant::staging_offset(view_.partial_floats);
  if (v.split_k_tickets(p) == 0) return;
  tickets_ = DeviceBuffer<unsigned>(v.split_k_tickets(p));
  // Once, and finished before any stream's launch: kernels leave tickets at zero, so launches and graph replays need
  // no reset.
  GT_CUDA_CALL(cudaMemset(tickets_.get(), 0, tickets_.bytes()));
  GT_CUDA_CALL(cudaDeviceSynchronize());
  view_.tickets = tickets_.get();
  view_.ticket_count = tickets_.size();
}

}  // namespace gemmtune::kernels
