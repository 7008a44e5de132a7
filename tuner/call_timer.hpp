// CallTimer: the GPU time of each timed call. CUPTI kernel records when CUPTI is free; CUDA events otherwise
// (under ncu, which holds CUPTI), with a warning, since events also count the gaps between a call's kernels.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

namespace gemmtune {

class CallTimer {
 public:
  virtual ~CallTimer() = default;
  virtual void begin_call(cudaStream_t s) = 0;
  virtual void end_call(cudaStream_t s) = 0;
  // Per-call microseconds of the calls since the last collect(), in order; the stream must be synchronized.
  virtual std::vector<double> collect() = 0;
  virtual const char* name() const = 0;  // "cupti" or "events"
};

// CUPTI unless `force_events`; if CUPTI cannot start, events, and *warning says why.
std::unique_ptr<CallTimer> make_call_timer(bool force_events, std::string* warning);

}  // namespace gemmtune
