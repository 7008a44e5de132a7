// CuptiKernelTimer: the GPU time of each timed call, from CUPTI's concurrent-kernel activity records.
//
// One call may launch several kernels (a split-k reduction, our epilogue after cuBLASLt). Every CUDA API call made
// between begin_call() and end_call() is tagged with that call's external correlation id, and each kernel record
// maps to its launching API call, so a call's time is (last kernel end − first kernel start) over its own kernels.
// Kernels launched outside a call (an L2 flush, the blocking kernel) are not counted.
//
// CUPTI's activity API has one subscriber per process: only one timer may exist at a time, and it cannot start
// under ncu (which holds CUPTI); the constructor throws CheckError then and the caller falls back to events.
#pragma once

#include <cstdint>
#include <vector>

namespace gemmtune {

class CuptiKernelTimer {
 public:
  CuptiKernelTimer();
  ~CuptiKernelTimer();
  CuptiKernelTimer(const CuptiKernelTimer&) = delete;
  CuptiKernelTimer& operator=(const CuptiKernelTimer&) = delete;

  void begin_call();
  void end_call();

  // After the stream holding the calls has been synchronized: flushes CUPTI's buffers and returns each call's GPU
  // time in microseconds, in call order, then forgets them. Throws CheckError if a call produced no kernel record.
  std::vector<double> collect();

 private:
  std::uint64_t next_call_id_ = 1;
  std::vector<std::uint64_t> call_ids_;  // calls since the last collect(), in order
  bool in_call_ = false;
};

}  // namespace gemmtune
