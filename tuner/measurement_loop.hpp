// The measurement loop: warm up, then batches of back-to-back calls queued behind a blocking kernel, rotating
// input sets, until the stopping rule is satisfied. Only the timed batches run inside the case's NVTX range.
#pragma once

#include <optional>
#include <string>

#include <cuda_runtime_api.h>

#include "launch/blocking_kernel.hpp"
#include "launch/candidate_launcher.hpp"
#include "launch/problem_buffers.hpp"
#include "problem/measurement.hpp"
#include "cuda/device_buffer.hpp"
#include "cupti/l2_flush.hpp"
#include "profile/sweep_profile.hpp"
#include "tuner/call_timer.hpp"

namespace gemmtune {

struct MeasureContext {
  cudaStream_t stream;
  CallTimer& timer;
  BlockingKernel& blocker;
  // With TimingSettings::l2_flush: twice the L2 read before every timed call (outside it), so each call starts with a
  // cold cache as in nvbench's cold measurement. Reads, not a memset: the memset's dirty lines were written back
  // inside the next call, 3-15 us more on a cold read of 82-631 MB (H200, scripts/dev/dram_read_probe.cu). Empty
  // when flushing is off.
  std::optional<L2Flush> l2_flush;
};

// Times `launcher` on `buffers` and returns its statistics, with the SM clock measured right after sampling.
// Everything a batch queues behind the blocking kernel runs once before the first batch (blocking_kernel.hpp: a first
// launch may wait for the GPU), and a batch whose blocking kernel timed out anyway is discarded.
TimingStats measure_candidate(const CandidateLauncher& launcher, const ProblemBuffers& buffers,
                              const TimingSettings& settings, MeasureContext& ctx);

// After a batch held by ctx.blocker has been synchronized: whether its blocking kernel timed out, so the batch must be
// discarded. The first time in a process it says so on stderr.
bool batch_timed_out(const MeasureContext& ctx);

// The short first batch the pruning rule judges a candidate by (tuner/candidate_pruning.hpp): its warm-up calls (at
// least kMinFirstBatchCalls), queued back to back behind the blocking kernel after one unblocked call, and timed like
// any batch inside the case's NVTX range (once more if the blocking kernel timed out). Returns their statistics
// (stopped_by left empty), with the SM clock measured right after.
TimingStats time_first_batch(const CandidateLauncher& launcher, const ProblemBuffers& buffers,
                             const TimingSettings& settings, MeasureContext& ctx);

}  // namespace gemmtune
