// CudaStream and CudaEvent: RAII owners of a stream and an event.
#pragma once

#include <utility>

#include "cuda/cuda_call.hpp"

namespace gemmtune {

class CudaStream {
 public:
  CudaStream() { GT_CUDA_CALL(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~CudaStream() {
    if (stream_) cudaStreamDestroy(stream_);
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  CudaStream(CudaStream&& o) noexcept : stream_(std::exchange(o.stream_, nullptr)) {}
  CudaStream& operator=(CudaStream&&) = delete;

  cudaStream_t get() const { return stream_; }
  void synchronize() const { GT_CUDA_CALL(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

// Whether stream s has no work left. cudaErrorNotReady is an answer, not an error: it is cleared (as PyTorch's
// Stream.query does) so the next launch's check does not report it. Never ask a capturing stream: the query would
// invalidate the capture.
inline bool stream_drained(cudaStream_t s) {
  const cudaError_t e = cudaStreamQuery(s);
  if (e == cudaErrorNotReady) (void)cudaGetLastError();
  return e == cudaSuccess;
}

class CudaEvent {
 public:
  CudaEvent() { GT_CUDA_CALL(cudaEventCreate(&event_)); }
  ~CudaEvent() {
    if (event_) cudaEventDestroy(event_);
  }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  CudaEvent(CudaEvent&& o) noexcept : event_(std::exchange(o.event_, nullptr)) {}
  CudaEvent& operator=(CudaEvent&&) = delete;

  cudaEvent_t get() const { return event_; }
  void record(cudaStream_t s) const { GT_CUDA_CALL(cudaEventRecord(event_, s)); }

  // Whether the work before its last record() has run. cudaErrorNotReady is an answer, cleared as stream_drained
  // clears it; any other error throws.
  bool done() const {
    const cudaError_t e = cudaEventQuery(event_);
    if (e == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    GT_CUDA_CALL(e);
    return true;
  }

  // Milliseconds from `start` to this event; both must have completed.
  float elapsed_ms_since(const CudaEvent& start) const {
    float ms = 0.f;
    GT_CUDA_CALL(cudaEventElapsedTime(&ms, start.event_, event_));
    return ms;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace gemmtune
