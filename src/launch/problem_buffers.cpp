#include "launch/problem_buffers.hpp"

#include "launch/device_footprint.hpp"
#include "launch/random_fill.hpp"

namespace gemmtune {

ProblemBuffers::ProblemBuffers(const GemmProblem& p, std::size_t l2_bytes, std::uint64_t seed, cudaStream_t s)
    : problem_(p), seed_(seed), dropout_offset_((seed >> 1) | 1) {
  const auto a_count = static_cast<std::size_t>(p.m * p.k);
  const auto b_count = static_cast<std::size_t>(p.k * p.n);
  const auto y_count = static_cast<std::size_t>(p.m * p.n);
  const int sets = input_set_count(p, l2_bytes);
  for (int i = 0; i < sets; ++i) {
    a_.emplace_back(a_count);
    b_.emplace_back(b_count);
    const std::uint64_t set_seed = seed * 1000003ull + static_cast<std::uint64_t>(i) * 3;
    fill_uniform(a_.back().get(), a_count, set_seed + 0, -1.f, 1.f, s);
    fill_uniform(b_.back().get(), b_count, set_seed + 1, -1.f, 1.f, s);
    if (p.epi.bias) {
      bias_.emplace_back(static_cast<std::size_t>(p.n));
      fill_uniform(bias_.back().get(), static_cast<std::size_t>(p.n), set_seed + 2, -1.f, 1.f, s);
    }
  }
  y_ = DeviceBuffer<float>(y_count);
  if (p.epi.save_z) z_ = DeviceBuffer<float>(y_count);
  if (p.epi.dropout()) {
    device_offset_ = DeviceBuffer<std::uint64_t>(1);
    GT_CUDA_CALL(cudaMemcpyAsync(device_offset_.get(), &dropout_offset_, sizeof(dropout_offset_),
                                 cudaMemcpyHostToDevice, s));
    GT_CUDA_CALL(cudaStreamSynchronize(s));  // a pageable copy may still be in flight when the call returns
  }
  poison_outputs(s);
}

GemmOperands ProblemBuffers::operands(int i) const {
  const auto set = static_cast<std::size_t>(i % sets());
  GemmOperands x;
  x.A = a_[set].get();
  x.B = b_[set].get();
  x.bias = problem_.epi.bias ? bias_[set].get() : nullptr;
  x.Y = y_.get();
  x.Z = z_.get();
  x.seed = seed_ ^ 0x5eedull;
  x.offset = dropout_offset_;
  if (offset_form_ == DropoutOffsetForm::Pointer && device_offset_.get()) {
    x.offset = 0;
    x.offset_ptr = device_offset_.get();
  }
  return x;
}

void ProblemBuffers::poison_outputs(cudaStream_t s) const {
  fill_nan(y_.get(), y_.size(), s);
  if (z_.get()) fill_nan(z_.get(), z_.size(), s);
}

}  // namespace gemmtune
