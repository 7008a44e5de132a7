// StreamScratch: the device memory one caller stream's calls write besides their outputs. Calls on two streams may
// run at the same time, so every stream a Runtime is called on has its own; calls on one stream run in order, so they
// share it:
//   - the cuBLASLt workspace, where our split-k partials and staged operand copies go too (workspace_bytes);
//   - each split-k GEMM's tickets, and each backward's gZ, bias-gradient partial sums and tickets, made at the first
//     call of that GEMM or backward on this stream;
//   - for backwards whose two GEMMs run side by side, a side stream, its own workspace and the events that fork it
//     from the caller's stream and join it back.
// Nothing is freed before the pool is: a captured graph keeps the addresses it was captured with.
//
// Work captured into a CUDA graph runs when the graph is replayed, beside whatever the capture stream does then, so a
// capture has scratch of its own too (per capture and stream: a capture may fork onto several streams). It is made
// during the capture: the allocations and the zeroing of tickets run with this thread's capture mode relaxed, on a
// stream of the pool's that is never captured, so nothing of it becomes part of the graph (as PyTorch's allocator
// allocates during captures). Only two overlapping replays of one graph share scratch: that graph's.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include <cuda_runtime_api.h>

#include "cuda/device_buffer.hpp"
#include "cuda/stream.hpp"
#include "launch/candidate_launcher.hpp"
#include "runtime/fork_join.hpp"

namespace gemmtune::runtime {

// What a piece of per-stream scratch is for; with its owner (a plan), the key it is found by.
enum class ScratchUse { SplitKTickets, Gz, BiasPartials, BiasTickets };

class StreamScratch {
 public:
  // `lent`: device memory of the caller's to use as the workspace (workspace_bytes of it); null: allocate one.
  StreamScratch(std::size_t workspace_bytes, void* lent, cudaStream_t zeroing);
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;

  BorrowedWorkspace workspace() const { return workspace_; }
  // `count` floats (ScratchUse::Gz, BiasPartials) or zeroed tickets (the others) of `owner`'s on this stream: the same
  // memory at every call; null where count is 0.
  float* floats(const void* owner, ScratchUse use, std::size_t count);
  unsigned* tickets(const void* owner, ScratchUse use, std::size_t count);

  // The side stream of a backward's second GEMM, with a workspace of its own; made at the first such backward.
  cudaStream_t side_stream();
  BorrowedWorkspace side_workspace();
  const ForkJoin& fork_join();

  // Device memory this stream's scratch holds now, the lent workspace not counted.
  std::size_t device_bytes() const;

 private:
  unsigned char* buffer(const void* owner, ScratchUse use, std::size_t bytes, bool zeroed);

  std::size_t workspace_bytes_;
  cudaStream_t zeroing_;
  DeviceBuffer<unsigned char> owned_workspace_;  // empty where lent
  BorrowedWorkspace workspace_;
  std::map<std::pair<const void*, ScratchUse>, DeviceBuffer<unsigned char>> buffers_;
  struct Side {
    CudaStream stream;
    DeviceBuffer<unsigned char> workspace;
    ForkJoin fork_join;
  };
  std::unique_ptr<Side> side_;
};

// Every stream's scratch, found by the stream's id (cudaStreamGetId: unlike a handle, never reused by a later stream),
// and every capture's, found by the capture's id and the stream's handle; made at the first call there and kept until the pool goes. At most
// max_sets of them: a program that keeps making new streams or captures gets an InputError at the next one rather
// than an unbounded amount of device memory.
class StreamScratchPool {
 public:
  // The first scratch made uses `lent` as its workspace where it is non-null.
  StreamScratchPool(std::size_t workspace_bytes, void* lent, int max_sets);

  StreamScratch& of(cudaStream_t s);

  std::size_t sets() const { return by_stream_.size(); }
  std::size_t device_bytes() const;

 private:
  std::size_t workspace_bytes_;
  void* lent_;
  int max_sets_;
  CudaStream zeroing_;
  struct Key {
    bool capturing = false;
    unsigned long long stream = 0;   // the stream's id; while capturing, its handle
    unsigned long long capture = 0;  // the capture's id, while capturing
    bool operator<(const Key& o) const {
      return std::tie(capturing, stream, capture) < std::tie(o.capturing, o.stream, o.capture);
    }
  };
  std::map<Key, std::unique_ptr<StreamScratch>> by_stream_;
};

}  // namespace gemmtune::runtime
