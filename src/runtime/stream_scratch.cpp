#include "runtime/stream_scratch.hpp"

#include <cstdint>
#include <string>

#include "common/error.hpp"
#include "cuda/cuda_call.hpp"

namespace gemmtune::runtime {
namespace {

// While alive, this thread may allocate and synchronize its own streams even where a stream it is capturing was begun
// in cudaStreamCaptureModeGlobal, which otherwise forbids both. Nothing it does is enqueued on a capturing stream.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { GT_CUDA_CALL(cudaThreadExchangeStreamCaptureMode(&previous_)); }
  ~RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&previous_); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode previous_ = cudaStreamCaptureModeRelaxed;
};

std::string mib(std::size_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

}  // namespace

void ScratchBudget::check(std::size_t bytes, const char* what) const {
  if (limit_ == 0 || used_ + bytes <= limit_) return;
  throw MemoryBudgetError(std::string(what) + " needs " + mib(bytes) + " more device memory, and the runtime's " +
                          mib(used_) + " of scratch would pass its budget of " + mib(limit_) +
                          " (RuntimeOptions::max_scratch_bytes)");
}

DeviceBuffer<unsigned char> ScratchBudget::allocate(std::size_t bytes, const char* what) {
  check(bytes, what);
  DeviceBuffer<unsigned char> b(bytes);
  used_ += bytes;
  return b;
}

StreamScratch::StreamScratch(std::size_t workspace_bytes, void* lent, bool capture, cudaStream_t zeroing,
                             ScratchBudget& budget)
    : workspace_bytes_(workspace_bytes), capture_(capture), zeroing_(zeroing), budget_(&budget) {
  if (capture) return;
  if (!lent) owned_workspace_ = budget.allocate(workspace_bytes, "a new stream's workspace");
  workspace_ = BorrowedWorkspace{lent ? lent : owned_workspace_.get(), workspace_bytes};
}

BorrowedWorkspace StreamScratch::workspace(const void* owner, std::size_t needed) {
  if (!capture_) return workspace_;
  return BorrowedWorkspace{buffer(owner, ScratchUse::Workspace, needed, false), needed};
}

BorrowedWorkspace StreamScratch::side_workspace(const void* owner, std::size_t needed) {
  if (capture_) return BorrowedWorkspace{buffer(owner, ScratchUse::SideWorkspace, needed, false), needed};
  side_stream();
  return BorrowedWorkspace{side_workspace_.get(), side_workspace_.size()};
}

unsigned char* StreamScratch::buffer(const void* owner, ScratchUse use, std::size_t bytes, bool zeroed) {
  if (bytes == 0) return nullptr;
  const auto key = std::make_pair(owner, use);
  if (const auto it = buffers_.find(key); it != buffers_.end()) return it->second.get();
  const RelaxedCaptureMode relaxed;
  DeviceBuffer<unsigned char> b = budget_->allocate(
      bytes, use == ScratchUse::Padding ? "a padded or staged candidate's operand copies" : "a call's scratch");
  if (zeroed) {
    // Finished before any of the caller's streams can use it: the kernels only ever leave their tickets at zero.
    GT_CUDA_CALL(cudaMemsetAsync(b.get(), 0, bytes, zeroing_));
    GT_CUDA_CALL(cudaStreamSynchronize(zeroing_));
  }
  return buffers_.emplace(key, std::move(b)).first->second.get();
}

float* StreamScratch::floats(const void* owner, ScratchUse use, std::size_t count) {
  return reinterpret_cast<float*>(buffer(owner, use, count * sizeof(float), use == ScratchUse::Padding));
}

unsigned* StreamScratch::tickets(const void* owner, ScratchUse use, std::size_t count) {
  return reinterpret_cast<unsigned*>(buffer(owner, use, count * sizeof(unsigned), true));
}

cudaStream_t StreamScratch::side_stream() {
  if (!side_) {
    const RelaxedCaptureMode relaxed;
    if (!capture_) budget_->check(workspace_bytes_, "a side stream's workspace");
    side_.reset(new Side{CudaStream(), ForkJoin()});
    if (!capture_) side_workspace_ = budget_->allocate(workspace_bytes_, "a side stream's workspace");
  }
  return side_->stream.get();
}

const ForkJoin& StreamScratch::fork_join() {
  side_stream();
  return side_->fork_join;
}

std::size_t StreamScratch::device_bytes() const {
  std::size_t bytes = owned_workspace_.size() + side_workspace_.size();
  for (const auto& [key, b] : buffers_) bytes += b.size();
  return bytes;
}

StreamScratchPool::StreamScratchPool(std::size_t workspace_bytes, void* lent, int max_streams, int max_captures,
                                     std::size_t max_bytes)
    : workspace_bytes_(workspace_bytes), lent_(lent), max_streams_(max_streams), max_captures_(max_captures),
      budget_(max_bytes) {
  if (max_streams < 1)
    throw InputError("RuntimeOptions::max_stream_scratch must be at least 1, not " + std::to_string(max_streams));
  if (max_captures < 0)
    throw InputError("RuntimeOptions::max_capture_scratch must not be negative, not " + std::to_string(max_captures));
}

StreamScratch& StreamScratchPool::of(cudaStream_t s) {
  // A capturing stream cannot be asked its id (cudaErrorStreamCaptureUnsupported); while the capture lasts, its
  // handle names it.
  Key key;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  GT_CUDA_CALL(cudaStreamGetCaptureInfo(s, &status, &key.capture));
  key.capturing = status != cudaStreamCaptureStatusNone;
  if (key.capturing)
    key.stream = reinterpret_cast<std::uintptr_t>(s);
  else
    GT_CUDA_CALL(cudaStreamGetId(s, &key.stream));
  if (const auto it = by_stream_.find(key); it != by_stream_.end()) return *it->second;
  if (key.capturing && captures() >= static_cast<std::size_t>(max_captures_))
    throw InputError("this Runtime has scratch for " + std::to_string(captures()) +
                     " graph captures already, and RuntimeOptions::max_capture_scratch allows no more");
  if (!key.capturing && streams_ >= static_cast<std::size_t>(max_streams_))
    throw InputError("this Runtime has scratch for " + std::to_string(streams_) +
                     " streams already, and RuntimeOptions::max_stream_scratch allows no more; reuse streams, or "
                     "raise the limit");
  void* lent = key.capturing || streams_ > 0 ? nullptr : lent_;
  const RelaxedCaptureMode relaxed;
  auto scratch = std::make_unique<StreamScratch>(workspace_bytes_, lent, key.capturing, zeroing_.get(), budget_);
  if (!key.capturing) ++streams_;
  return *by_stream_.emplace(key, std::move(scratch)).first->second;
}

std::size_t StreamScratchPool::device_bytes() const {
  std::size_t bytes = 0;
  for (const auto& [id, s] : by_stream_) bytes += s->device_bytes();
  return bytes;
}

}  // namespace gemmtune::runtime
