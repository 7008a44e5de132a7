// CudaGraphExec: the work one callable enqueues on a stream, captured as a CUDA graph and instantiated, owned.
// What a program that replays a captured step pays per call: no host launch per kernel, and the small gaps between
// one call's kernels that a stream launch leaves shrink to almost nothing.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "cuda/cuda_call.hpp"

namespace gemmtune {

// A captured graph, not instantiated, owned; with what the capture recorded.
class CapturedGraph {
 public:
  // Captures what enqueue() launches on s (which must not be capturing already).
  template <class Enqueue>
  static CapturedGraph capture(cudaStream_t s, Enqueue&& enqueue) {
    CapturedGraph out;
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
    out.count_programmatic_edges();
    return out;
  }

  // A copy of the graph (cudaGraphClone), to instantiate once more.
  CapturedGraph clone() const {
    CapturedGraph out;
    GT_CUDA_CALL(cudaGraphClone(&out.graph_, graph_));
    out.nodes_ = nodes_;
    out.programmatic_edges_ = programmatic_edges_;
    return out;
  }

  CapturedGraph(CapturedGraph&& o) noexcept
      : graph_(std::exchange(o.graph_, nullptr)), nodes_(o.nodes_), programmatic_edges_(o.programmatic_edges_) {}
  CapturedGraph& operator=(CapturedGraph&&) = delete;
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  ~CapturedGraph() {
    if (graph_) cudaGraphDestroy(graph_);
  }

  struct Edge {
    cudaGraphNode_t from, to;
    cudaGraphEdgeData data;  // its type and ports
  };

  cudaGraph_t get() const { return graph_; }
  // The nodes the capture recorded: a call's kernels, copies and event waits.
  std::size_t nodes() const { return nodes_; }
  // Edges that a kernel launched as a programmatic dependent launch left to the kernel before it: it starts as that
  // one's blocks retire, instead of after it has finished.
  std::size_t programmatic_edges() const { return programmatic_edges_; }

  std::vector<Edge> edges() const {
    std::size_t n = 0;
    get_edges(nullptr, nullptr, nullptr, &n);
    std::vector<cudaGraphNode_t> from(n), to(n);
    std::vector<cudaGraphEdgeData> data(n);
    if (n > 0) get_edges(from.data(), to.data(), data.data(), &n);
    std::vector<Edge> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back({from[i], to[i], data[i]});
    return out;
  }

 private:
  CapturedGraph() = default;
  void count_programmatic_edges() {
    for (const Edge& e : edges()) programmatic_edges_ += e.data.type == cudaGraphDependencyTypeProgrammatic;
  }
  void get_edges(cudaGraphNode_t* from, cudaGraphNode_t* to, cudaGraphEdgeData* data, std::size_t* n) const {
#if CUDART_VERSION >= 13000
    GT_CUDA_CALL(cudaGraphGetEdges(graph_, from, to, data, n));
#else  // 12.3-12.x: the edges' data through the _v2 call
    GT_CUDA_CALL(cudaGraphGetEdges_v2(graph_, from, to, data, n));
#endif
  }

  cudaGraph_t graph_ = nullptr;
  std::size_t nodes_ = 0;
  std::size_t programmatic_edges_ = 0;
};

class CudaGraphExec {
 public:
  // Captures what enqueue() launches on s (which must not be capturing already) and instantiates it with
  // instantiate_flags (cudaGraphInstantiateFlag*).
  template <class Enqueue>
  static CudaGraphExec capture(cudaStream_t s, Enqueue&& enqueue, unsigned long long instantiate_flags = 0) {
    return CudaGraphExec(CapturedGraph::capture(s, std::forward<Enqueue>(enqueue)), instantiate_flags);
  }

  // Another instance of the same work, instantiated from a clone with the same flags. Instances of one graph run at
  // speeds of their own for their life (scripts/dev/graph_draw_probe.cu).
  CudaGraphExec instantiate_again() const { return CudaGraphExec(graph_.clone(), flags_); }

  CudaGraphExec(CudaGraphExec&& o) noexcept
      : graph_(std::move(o.graph_)), flags_(o.flags_), exec_(std::exchange(o.exec_, nullptr)) {}
  CudaGraphExec& operator=(CudaGraphExec&&) = delete;
  CudaGraphExec(const CudaGraphExec&) = delete;
  CudaGraphExec& operator=(const CudaGraphExec&) = delete;
  ~CudaGraphExec() {
    if (exec_) cudaGraphExecDestroy(exec_);
  }

  void launch(cudaStream_t s) const { GT_CUDA_CALL(cudaGraphLaunch(exec_, s)); }
  // Puts the graph on the device ahead of its first launch, which otherwise does it (stream-ordered on s).
  void upload(cudaStream_t s) const { GT_CUDA_CALL(cudaGraphUpload(exec_, s)); }
  std::size_t nodes() const { return graph_.nodes(); }
  std::size_t programmatic_edges() const { return graph_.programmatic_edges(); }

 private:
  CudaGraphExec(CapturedGraph graph, unsigned long long instantiate_flags)
      : graph_(std::move(graph)), flags_(instantiate_flags) {
    GT_CUDA_CALL(cudaGraphInstantiate(&exec_, graph_.get(), instantiate_flags));
  }
  CapturedGraph graph_;
  unsigned long long flags_ = 0;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace gemmtune
