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

// How a dropout problem's counter base reaches the kernels: by value, or through a device pointer they read when they
// run (GemmOperands::offset_ptr, what a training loop replayed as a CUDA graph passes). The tuner verifies and times
// the pointer form, so the load is in every timing; the value form is there to measure the two side by side.
enum class DropoutOffsetForm { Value, Pointer };

class ProblemBuffers {
 public:
  // Fills every input set with fresh uniform values in [-1, 1) drawn from `seed`.
  ProblemBuffers(const GemmProblem& p, std::size_t l2_bytes, std::uint64_t seed, cudaStream_t s);

  int sets() const { return static_cast<int>(a_.size()); }
  // Operands of input set i (modulo sets()); all sets share the outputs. With dropout, the offset comes in the
  // current form: the pointer form leaves GemmOperands::offset at a different value than the device holds, so a
  // kernel that ignored the pointer would draw another mask and fail verification.
  GemmOperands operands(int i) const;
  void set_dropout_offset_form(DropoutOffsetForm form) { offset_form_ = form; }
  DropoutOffsetForm dropout_offset_form() const { return offset_form_; }
  std::uint64_t dropout_offset() const { return dropout_offset_; }
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
  std::uint64_t dropout_offset_;
  DeviceBuffer<std::uint64_t> device_offset_;  // holds dropout_offset_; only for dropout problems
  DropoutOffsetForm offset_form_ = DropoutOffsetForm::Pointer;
};

}  // namespace gemmtune
