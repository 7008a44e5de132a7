#include "kernels/split_k_scratch.hpp"

#include "kernels/registry.hpp"

namespace gemmtune::kernels {

SplitKScratchBuffer::SplitKScratchBuffer(const KernelVariant& v, const GemmProblem& p, float* lent_partials,
                                         std::size_t lent_floats) {
  const std::size_t floats = v.split_k_partial_floats(p);
  if (floats == 0) return;
  if (lent_partials && lent_floats >= floats) {
    view_.partials = lent_partials;
  } else {
    partials_ = DeviceBuffer<float>(floats);
    view_.partials = partials_.get();
  }
  view_.partial_floats = floats;
  tickets_ = DeviceBuffer<unsigned>(v.split_k_tickets(p));
  // Once, and finished before any stream's launch: kernels leave tickets at zero, so launches and graph replays need
  // no reset.
  GT_CUDA_CALL(cudaMemset(tickets_.get(), 0, tickets_.bytes()));
  GT_CUDA_CALL(cudaDeviceSynchronize());
  view_.tickets = tickets_.get();
  view_.ticket_count = tickets_.size();
}

}  // namespace gemmtune::kernels
