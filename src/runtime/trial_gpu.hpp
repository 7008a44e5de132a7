// The first-use trial on the GPU (first_use_trial.hpp: TrialGpu), and what the runtime keeps for it across problems:
// a stream of its own, the blocking kernel, two events, a cuBLASLt workspace and the operands' device memory. A first
// use then allocates only where its problem needs more memory than any problem tried before it, not a stream, a
// pinned flag, a workspace and some 2× L2 of inputs (dozens of cudaMalloc and cudaFree, each free a device-wide
// synchronization) per challenger, as the trial did before issue 37.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <vector>

#include "cuda/device_buffer.hpp"
#include "cuda/graph.hpp"
#include "cuda/stream.hpp"
#include "runtime/first_use_trial.hpp"
#include "launch/blocking_kernel.hpp"
#include "launch/candidate_launcher.hpp"

namespace gemmtune::runtime {

class TrialScratch {
 public:
  // workspace_bytes: the cuBLASLt workspace every trial's launchers share (RuntimeOptions::workspace_bytes).
  TrialScratch(std::size_t l2_bytes, std::size_t workspace_bytes);

  // Operand sets for `gemm` (what the trial's launchers run): input_set_count(gemm, l2) of them, rotating past 2× L2,
  // sharing one Y (and Z). The inputs hold uniform values in [-1, 1), filled when the memory is allocated: a trial
  // times, it does not verify, so the next problem reuses them. Allocates only where gemm needs more than is held.
  // The inputs' memory is at least 2× L2 even where the sets need less, so that rewriting 2× L2 of it evicts L2.
  std::vector<GemmOperands> operands_for(const GemmProblem& gemm);
  // Enqueues a rewrite of 2× L2 of the inputs' memory, values unchanged: L2 then holds none of the first sets (a cold
  // graph's) and is full of dirty lines, as a program's L2 is when its call comes (first_use_trial.hpp: evict_l2).
  void evict_l2();
  // After a trial: frees the operands' memory if a large problem grew it past kept_bytes(), so the runtime does not
  // hold it for the rest of the program.
  void trim();
  // 2× L2 + 128 MiB: the rotating inputs of any problem up to 64 MiB a set, and its outputs.
  std::size_t kept_bytes() const { return 2 * l2_bytes_ + (std::size_t{128} << 20); }

  BorrowedWorkspace workspace() const { return {workspace_.get(), workspace_.size()}; }
  cudaStream_t stream() const { return stream_.get(); }
  BlockingKernel& blocker() { return blocker_; }
  const CudaEvent& start() const { return start_; }
  const CudaEvent& stop() const { return stop_; }
  // Makes the trial's stream wait for the work queued on `producer` so far.
  void wait_for(cudaStream_t producer);

 private:
  std::size_t l2_bytes_;
  CudaStream stream_;
  BlockingKernel blocker_;
  CudaEvent start_, stop_, inputs_written_;
  DeviceBuffer<unsigned char> workspace_;
  DeviceBuffer<unsigned char> inputs_, outputs_;
  DeviceBuffer<std::uint64_t> dropout_offset_;  // the counter word a dropout problem's kernels read
};

// The call's own inputs, which the trial's warm set (set 0) reads in place of the scratch's where given: how fast a
// GEMM runs depends on where its operands lie. On the H200, with A and Y fixed and B read from 16 allocations in turn,
// 144x2704x8192 bias+gelu tf32 ran at one of two speeds by B's allocation: cuBLASLt's a43 cl12 (PyTorch eager's algo
// there) 58.5-58.6 us from 5 of them and 62.9-65.8 from the other 11, heuristic-first's a43 cl8 60.9-61.6 and
// 63.4-65.1 (results/nvidia-h200/address_speed_probe.txt); the trial's scratch, one buffer of sets laid A then B,
// had timed cl8 at 58.2-58.8 in stream cold (held-out seed 9638). The outputs stay the scratch's: the call writes its
// own after the trial.
struct CallerInputs {
  const float* A = nullptr;
  const float* B = nullptr;
  const float* bias = nullptr;
  cudaStream_t stream = nullptr;  // where they are written: the trial's stream waits for it first
};
// x's inputs, where every one starts on a 256-byte boundary as the scratch's do (cuBLASLt's algos and our launchers
// choose their paths by alignment); none otherwise, and the trial times the scratch alone.
std::optional<CallerInputs> caller_inputs(const GemmOperands& x, bool bias, cudaStream_t s);

// One problem's sides on a TrialScratch: sides[0] heuristic-first, then the challengers, all of one problem and all
// running in the scratch's workspace. Allocates its operand sets here, before any step.
class CudaTrialGpu final : public TrialGpu {
 public:
  // elapsed_us() counts from the end of construction.
  CudaTrialGpu(TrialScratch& scratch, std::vector<const CandidateLauncher*> sides,
               const std::optional<CallerInputs>& caller = std::nullopt);

  int sides() const override { return static_cast<int>(sides_.size()); }
  void launch(int side, int set) override;
  void wait() override;
  void capture_graph(int side, int calls, bool cold) override;
  void replay_graph(int side, bool cold) override;
  void evict_l2() override;
  void block() override;
  void start_timer() override;
  void stop_timer() override;
  bool release_and_wait() override;
  double timed_us() const override;
  double elapsed_us() const override;

 private:
  TrialScratch& scratch_;
  std::chrono::steady_clock::time_point began_;
  std::vector<const CandidateLauncher*> sides_;
  std::vector<GemmOperands> sets_;
  std::vector<std::optional<CudaGraphExec>> graphs_[2];  // per side: on the warm set, on the cold sets
};

}  // namespace gemmtune::runtime
