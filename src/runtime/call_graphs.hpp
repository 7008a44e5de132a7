// CallGraphs: one plan's calls that repeat exactly, replayed as CUDA graphs instead of launched kernel by kernel.
//
// A launch costs the host per kernel: on the H200 machine 6.1-6.4 us for one cuBLASLt call and 19-25 us for a `+pad`
// candidate's copy, cuBLASLt call and epilogue kernel, where a replay of the same call captured as one graph costs
// 1.2-2.1 us, and capturing and instantiating it 12-39 us (scripts/dev/launch_host_probe.cu,
// results/nvidia-h200/launch_host_probe.txt). Programs repeat calls exactly: a loop over the same buffers, a training
// step whose tensors PyTorch's caching allocator places where the last step's were. So:
//   - the first sight of an exact call launches it as before (a call that never repeats costs a hash lookup);
//   - a later sight where the caller's stream has drained captures it, on a stream of the runtime's own that nothing
//     else enqueues on (a capture on the caller's stream would take in whatever another thread enqueued there
//     meanwhile, and the legacy default stream cannot be captured), uploads it there and replays it on the caller's
//     stream; later sights replay it. Instantiating and uploading a graph may wait for the GPU, and a program may
//     queue work behind a kernel that waits for the host (scripts/bench_heldout.sh's timed batches do), so nothing is
//     captured behind queued work: where the GPU keeps ahead of the host, the host's launch time costs nothing, and
//     where the host sets the pace, its stream drains between calls;
//   - a replay runs exactly what a launch with the same pointers and values would, so a call is exact only where
//     every one of them is equal: A, B, bias, Y, Z, seed, offset, offset_ptr, the stream's handle and its scratch
//     (whose memory the graph holds the addresses of, and which lives as long as the runtime).
// What a replay costs the GPU beside a launch (H200, results/nvidia-h200/launch_host_probe.txt): nothing for the same
// one-kernel graph replayed again; 0.2-0.4 us a call where each call replays a different one (calls on rotating
// buffers) or cuBLASLt's split-k call with its reduction kernel; 0.4-1.7 us less for three-kernel calls (+epi, +pad).
// Where the GPU is ahead of the host that cost is what the replay adds (held-out m = 1 GEMVs in stream/cold ran
// 0.971-0.980x heuristic-first's launches); telling that case apart per call would need the GPU's lead over the host,
// which a 0.2-0.5 us stream query does not give (busy says nothing of how much is queued).
// Bounded: kMaxGraphs graphs per plan, kMaxSeen remembered first sights (forgotten all at once when full); a plan
// that holds kMaxGraphs launches its other calls as before. Where a capture fails, the plan's calls launch as before
// from then on. The caller launches as before where its stream is capturing (its calls go into its own graph).
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <unordered_map>
#include <unordered_set>

#include <cuda_runtime_api.h>

#include "cuda/graph.hpp"
#include "problem/gemm_problem.hpp"

namespace gemmtune::runtime {

// What makes two calls of one plan the same call.
struct ExactCall {
  GemmOperands x;
  cudaStream_t stream = nullptr;
  const void* scratch = nullptr;  // the stream's StreamScratch
  bool operator==(const ExactCall& o) const;
};

struct ExactCallHash {
  std::size_t operator()(const ExactCall& c) const;
};

class CallGraphs {
 public:
  static constexpr std::size_t kMaxGraphs = 64;
  static constexpr std::size_t kMaxSeen = 1024;

  // Runs `call` as a replay of its graph, capturing that first where this is its second sight, and returns true; or
  // returns false, having enqueued nothing, where the caller must launch it itself. launch(stream) enqueues the call
  // on `stream`: what a capture on `capture_on` records.
  template <class Launch>
  bool run(const ExactCall& call, cudaStream_t capture_on, Launch&& launch) {
    if (off_) return false;
    if (const auto it = graphs_.find(call); it != graphs_.end()) {
      it->second.launch(call.stream);
      ++replays_;
      return true;
    }
    if (graphs_.size() >= kMaxGraphs || !ready_to_capture(call)) return false;
    try {
      CudaGraphExec graph = CudaGraphExec::capture(capture_on, [&] { launch(capture_on); });
      graph.upload(capture_on);  // there, not at the first replay on the caller's stream, which may wait for the GPU
      graphs_.emplace(call, std::move(graph)).first->second.launch(call.stream);
    } catch (const std::exception&) {
      turn_off();
      return false;
    }
    ++replays_;
    return true;
  }

  // Whether run() of this call, where its stream has drained, would replay it: its graph is held, or it was seen
  // before and the plan holds fewer than kMaxGraphs. A first sight is remembered, as run's would be, so a caller that
  // asks instead of running (`gemmtune apply`, before handing a call to the library) still lets its repeat replay.
  bool repeats(const ExactCall& call);

  std::size_t graphs() const { return graphs_.size(); }
  std::size_t replays() const { return replays_; }

 private:
  bool ready_to_capture(const ExactCall& call);
  void remember(const ExactCall& call);
  void turn_off();

  bool off_ = false;
  std::size_t replays_ = 0;
  std::unordered_set<ExactCall, ExactCallHash> seen_;
  std::unordered_map<ExactCall, CudaGraphExec, ExactCallHash> graphs_;
};

}  // namespace gemmtune::runtime
