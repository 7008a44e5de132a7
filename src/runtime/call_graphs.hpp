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
// What a replay costs the GPU beside a launch (H200, results/nvidia-h200/launch_host_probe.txt): nothing for the
// graph the plan replayed last time again; 0.4-1.7 us less for three-node calls (+epi, +pad); 0.13-0.46 us more where
// each call replays another one- or two-node graph than the last (calls on rotating buffers, as a model's layers are,
// or heldout_bench's stream/cold: 0.971-0.980x heuristic-first's launches at m = 1 there). A launch's host time is
// free only where the GPU is ahead of the host. So where a call would replay another one- or two-node graph than the
// last, its stream still has work queued and the plan's launch takes less host time than its replay takes the GPU
// (both measured here: a launch by the host clock, a sample of replays between two events), the call is launched:
// the host stays ahead while it launches. The same holds for the same call again where the plan's launches overlap
// each other: our wgmma kernels start behind the kernel before them (kernels::LaunchScratch::behind_previous_kernel),
// and a replay, a graph of its own, starts only after the last call has finished: on the H200 back-to-back launches
// ran 5.45 us a call at 256^3 tf32 bias+gelu, replays of the same call 6.42-6.47 (results/nvidia-h200/
// programmatic_launch.txt). Whether they overlap is read once per plan, from a graph of two calls captured beside its
// first: a programmatic edge between the two. Anywhere else a call is replayed (replay_may_cost_more,
// launch_hides_under_gpu).
// Bounded: kMaxGraphs graphs per plan, kMaxSeen remembered first sights (forgotten all at once when full); a plan
// that holds kMaxGraphs launches its other calls as before. Where a capture fails, the plan's calls launch as before
// from then on. The caller launches as before where its stream is capturing (its calls go into its own graph).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <cuda_runtime_api.h>

#include "cuda/graph.hpp"
#include "cuda/stream.hpp"
#include "problem/candidate.hpp"
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

// What a plan's calls were measured to cost, in microseconds: the least of each kind seen, infinity until then.
struct CallCosts {
  static constexpr double kUnmeasured = std::numeric_limits<double>::infinity();
  double launch_host_us = kUnmeasured;  // a launch, host clock around it
  double replay_host_us = kUnmeasured;  // a replay, host clock around cudaGraphLaunch
  // A replay between two events recorded on its stream. Where the stream was idle the first event ran before the
  // graph was enqueued, so this exceeds the GPU's own time by at most replay_host_us.
  double replay_gpu_us = kUnmeasured;
};

// Whether replaying a held graph may cost the GPU more than launching its call: a graph of one or two nodes other than
// the one this plan replayed last, or any graph of a plan whose launches overlap each other.
bool replay_may_cost_more(std::size_t graph_nodes, bool replayed_last, bool launches_overlap);

// Whether two calls captured together overlap: the pair's graph holds a programmatic edge more than each call's own.
bool launches_overlap(std::size_t call_programmatic_edges, std::size_t pair_programmatic_edges);

// Whether a plan launches every call of `gemm` (the GEMM its pass runs) by candidate c instead of replaying it: a
// cuBLASLt split-k algo at m = 1. On the H200 those ran 0.974-0.996x of their own raw launches where the runtime
// replayed them and 0.996-1.004x where it launched them (results/nvidia-h200/replay_overlap_ab.txt, cause not found);
// over 54 held-out seeds their 33 records per stream condition ran 0.991x (cold) and 0.997x (warm) of
// heuristic-first's launches, 24 of the 66 below 0.99x, where every other kind of call replayed at 0.999-1.028x.
bool launches_every_call(const GemmProblem& gemm, const Candidate& c);

// Whether the plan's launch takes less host time than the least its replay took the GPU: then, where the stream still
// has work queued, launching keeps the host ahead of a GPU that was ahead already. False until both are measured.
bool launch_hides_under_gpu(const CallCosts& costs);

class CallGraphs {
 public:
  static constexpr std::size_t kMaxGraphs = 64;
  static constexpr std::size_t kMaxSeen = 1024;

  // launch_only (launches_every_call): every call is launched, none captured.
  explicit CallGraphs(bool launch_only = false) : off_(launch_only) {}

  // Runs `call`: as a replay of its graph (capturing that first where this is its second sight), or by
  // launch(call.stream). launch(stream) enqueues the call on `stream`: what a capture on `capture_on` records.
  template <class Launch>
  void run(const ExactCall& call, cudaStream_t capture_on, Launch&& launch) {
    if (!off_) {
      if (const auto it = graphs_.find(call); it != graphs_.end()) {
        if (!launch_ahead(call, it->second)) {
          replay(call, it->second);
          return;
        }
      } else if (graphs_.size() < kMaxGraphs && ready_to_capture(call)) {
        try {
          CudaGraphExec graph = CudaGraphExec::capture(capture_on, [&] { launch(capture_on); });
          if (!launches_overlap_) {
            const CapturedGraph pair = CapturedGraph::capture(capture_on, [&] {
              launch(capture_on);
              launch(capture_on);
            });
            launches_overlap_ = launches_overlap(graph.programmatic_edges(), pair.programmatic_edges());
          }
          // Uploaded there, not at the first replay on the caller's stream, which may wait for the GPU.
          graph.upload(capture_on);
          graphs_.emplace(call, std::move(graph)).first->second.launch(call.stream);
          last_ = call;
          ++replays_;
          return;
        } catch (const std::exception&) {
          turn_off();
        }
      }
    }
    const auto start = std::chrono::steady_clock::now();
    launch(call.stream);
    costs_.launch_host_us = std::min(costs_.launch_host_us, us_since(start));
    last_ = call;
  }

  // Whether run() of this call, where its stream has drained, would replay it: its graph is held, or it was seen
  // before and the plan holds fewer than kMaxGraphs. A first sight is remembered, as run's would be, so a caller that
  // asks instead of running (`gemmtune apply`, before handing a call to the library) still lets its repeat replay.
  bool repeats(const ExactCall& call);

  std::size_t graphs() const { return graphs_.size(); }
  std::size_t replays() const { return replays_; }
  // Calls whose graph was held but that were launched, the GPU being ahead.
  std::size_t launches_ahead() const { return launches_ahead_; }
  // Whether this plan's calls, launched back to back, overlap each other; unknown until its first capture.
  std::optional<bool> overlapping_launches() const { return launches_overlap_; }

 private:
  // Two events around a sampled replay, read at a later call.
  struct ReplayTimer {
    CudaEvent start, end;
    bool pending = false;
    std::size_t samples = 0;
  };

  static double us_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  }
  bool launch_ahead(const ExactCall& call, const CudaGraphExec& graph);
  void replay(const ExactCall& call, const CudaGraphExec& graph);
  void read_replay_timer();
  bool ready_to_capture(const ExactCall& call);
  void remember(const ExactCall& call);
  void turn_off();

  bool off_ = false;
  std::size_t replays_ = 0;
  std::size_t launches_ahead_ = 0;
  CallCosts costs_;
  std::optional<ExactCall> last_;  // the call this plan ran last, launched or replayed
  std::optional<bool> launches_overlap_;  // read at the plan's first capture
  std::unique_ptr<ReplayTimer> timer_;  // made at the first sampled replay
  std::unordered_set<ExactCall, ExactCallHash> seen_;
  std::unordered_map<ExactCall, CudaGraphExec, ExactCallHash> graphs_;
};

}  // namespace gemmtune::runtime
