// CudaGraphExec: the work one callable enqueues on a stream, captured as a CUDA graph and instantiated, owned.
// What a program that replays a captured step pays per call: no host launch per kernel, and the small gaps between
// one call's kernels that a stream launch leaves shrink to almost nothing.
#pragma once

#include <cstddef>
#include <utility>

#include "cuda/cuda_call.hpp"

namespace gemmtune {

class CudaGraphExec {
 public:
  // Captures what enqueue() launches on s (which must not be capturing already) and instantiates it with
  // instantiate_flags (cudaGraphInstantiateFlag*).
  template <class Enqueue>
  static CudaGraphExec capture(cudaStream_t s, Enqueue&& enqueue, unsigned long long instantiate_flags = 0) {
    CudaGraphExec out;
    GT_CUDA_CALL(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue();
    } catch (...) {
      cudaGraph_t broken = nullptr;
      if (cudaStreamEndCapture(s, &broken) == cudaSuccess && broken) cudaGraphDestroy(broken);
      throw;
    }
    GT_CUDA_CALL(cudaStreamEndCapture(s, &out.graph_));
    GT_CUDA_CALL(cudaGraphGetNodes(out.graph_, nullptr, &out.nodes_));
    GT_CUDA_CALL(cudaGraphInstantiate(&out.exec_, out.graph_, instantiate_flags));
    return out;
  }

  CudaGraphExec(CudaGraphExec&& o) noexcept
      : graph_(std::exchange(o.graph_, nullptr)), exec_(std::exchange(o.exec_, nullptr)), nodes_(o.nodes_) {}
  CudaGraphExec& operator=(CudaGraphExec&&) = delete;
  CudaGraphExec(const CudaGraphExec&) = delete;
  CudaGraphExec& operator=(const CudaGraphExec&) = delete;
  ~CudaGraphExec() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
  }

  void launch(cudaStream_t s) const { GT_CUDA_CALL(cudaGraphLaunch(exec_, s)); }
  // Puts the graph on the device ahead of its first launch, which otherwise does it (stream-ordered on s).
  void upload(cudaStream_t s) const { GT_CUDA_CALL(cudaGraphUpload(exec_, s)); }
  // The nodes the capture recorded: a call's kernels, copies and event waits.
  std::size_t nodes() const { return nodes_; }

 private:
  CudaGraphExec() = default;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  std::size_t nodes_ = 0;
};

}  // namespace gemmtune
