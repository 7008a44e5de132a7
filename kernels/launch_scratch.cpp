#include "kernels/launch_scratch.hpp"

#include "kernels/registry.hpp"

namespace gemmtune::kernels {

LaunchScratch place_launch_scratch(const KernelVariant& v, const GemmProblem& p, float* floats, unsigned* tickets,
                                   float* staging) {
  LaunchScratch view;
  view.partial_floats = v.split_k_partial_floats(p);
  if (view.partial_floats > 0) view.partials = floats;
  view.staging_floats = v.staging_floats(p);
  if (view.staging_floats > 0)
    view.staging = staging ? staging : floats + KernelVariant::staging_offset(view.partial_floats);
  view.ticket_count = v.split_k_tickets(p);
  if (view.ticket_count > 0) view.tickets = tickets;
  return view;
}

LaunchScratchBuffer::LaunchScratchBuffer(const KernelVariant& v, const GemmProblem& p, float* lent,
                                         std::size_t lent_floats) {
  const std::size_t floats = v.scratch_floats(p);
  if (floats == 0) return;
  float* base = lent;
  if (!lent || lent_floats < floats) {
    floats_ = DeviceBuffer<float>(floats);
    base = floats_.get();
  }
  if (v.split_k_tickets(p) > 0) {
    tickets_ = DeviceBuffer<unsigned>(v.split_k_tickets(p));
    // Once, and finished before any stream's launch: kernels leave tickets at zero, so launches and graph replays need
    // no reset.
    GT_CUDA_CALL(cudaMemset(tickets_.get(), 0, tickets_.bytes()));
    GT_CUDA_CALL(cudaDeviceSynchronize());
  }
  view_ = place_launch_scratch(v, p, base, tickets_.get());
}

}  // namespace gemmtune::kernels
