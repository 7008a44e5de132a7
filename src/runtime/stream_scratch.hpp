// StreamScratch: the device memory one caller stream's calls write besides their outputs. Calls on two streams may
// run at the same time, so every stream a Runtime is called on has its own; calls on one stream run in order, so they
// share it:
//   - the cuBLASLt workspace, where our split-k partials go too (workspace_bytes, shared by every call on the stream);
//   - each split-k GEMM's tickets, each padded cuBLASLt candidate's copies or staged variant's operand copies
//     (ScratchUse::Padding), and each backward's gZ, bias-gradient partial sums and tickets, made at the first call
//     of that GEMM or backward on this stream;
//   - for backwards whose two GEMMs run side by side, a side stream, its own workspace and the events that fork it
//     from the caller's stream and join it back.
// Nothing is freed before the pool is: a captured graph keeps the addresses it was captured with.
//
// Work captured into a CUDA graph runs when the graph is replayed, beside whatever the capture stream does then, so a
// capture has scratch of its own too (per capture and stream: a capture may fork onto several streams). A program may
// capture hundreds of graphs, so a capture's scratch holds only what its calls need: each call's own workspace of the
// size its algo or variant asks for (often none), not a shared workspace_bytes. It is made during the capture: the
// allocations and the zeroing of tickets run with this thread's capture mode relaxed, on a stream of the pool's that
// is never captured, so nothing of it becomes part of the graph (as PyTorch's allocator allocates during captures).
// Only two overlapping replays of one graph share scratch: that graph's.
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

// The device memory every stream's and capture's scratch may hold together (RuntimeOptions::max_scratch_bytes; 0:
// no limit). Each allocation asks first: one that would pass the limit throws MemoryBudgetError and allocates nothing.
class ScratchBudget {
 public:
  explicit ScratchBudget(std::size_t limit) : limit_(limit) {}
  // Throws MemoryBudgetError, naming `what`, where `bytes` more would pass the limit.
  void check(std::size_t bytes, const char* what) const;
  // `bytes` of device memory, checked against the limit and counted.
  DeviceBuffer<unsigned char> allocate(std::size_t bytes, const char* what);
  std::size_t used() const { return used_; }

 private:
  std::size_t limit_;
  std::size_t used_ = 0;
};

// What a piece of per-stream scratch is for; with its owner (a plan), the key it is found by.
enum class ScratchUse { Workspace, SideWorkspace, SplitKTickets, Gz, BiasPartials, BiasTickets, Padding };

class StreamScratch {
 public:
  // A stream's scratch shares one workspace of workspace_bytes among its calls: `lent` (the caller's device memory) or
  // one of its own. A capture's (capture true) gives each call a workspace of the size it needs.
  StreamScratch(std::size_t workspace_bytes, void* lent, bool capture, cudaStream_t zeroing, ScratchBudget& budget);
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;

  // The workspace of `owner`'s calls (a launcher that needs `needed` bytes), on this stream or on its side stream.
  BorrowedWorkspace workspace(const void* owner, std::size_t needed);
  BorrowedWorkspace side_workspace(const void* owner, std::size_t needed);
  // `count` floats (ScratchUse::Gz, BiasPartials; zeroed for Padding) or zeroed tickets (the others) of `owner`'s on
  // this stream: the same memory at every call; null where count is 0.
  float* floats(const void* owner, ScratchUse use, std::size_t count);
  unsigned* tickets(const void* owner, ScratchUse use, std::size_t count);

  // The side stream of a backward's second GEMM; made at the first such backward.
  cudaStream_t side_stream();
  const ForkJoin& fork_join();

  // Device memory this stream's scratch holds now, the lent workspace not counted.
  std::size_t device_bytes() const;
  // Whether this is a graph capture's scratch (the calls are being captured by the caller).
  bool capture() const { return capture_; }

 private:
  unsigned char* buffer(const void* owner, ScratchUse use, std::size_t bytes, bool zeroed);

  std::size_t workspace_bytes_;
  bool capture_;
  cudaStream_t zeroing_;
  ScratchBudget* budget_;  // the pool's
  DeviceBuffer<unsigned char> owned_workspace_;  // empty where lent, and in a capture's
  BorrowedWorkspace workspace_;
  DeviceBuffer<unsigned char> side_workspace_;  // a stream's, made with its side stream
  std::map<std::pair<const void*, ScratchUse>, DeviceBuffer<unsigned char>> buffers_;
  struct Side {
    CudaStream stream;
    ForkJoin fork_join;
  };
  std::unique_ptr<Side> side_;
};

// Every stream's scratch, found by the stream's id (cudaStreamGetId: unlike a handle, never reused by a later stream),
// and every capture's, found by the capture's id and the stream's handle; made at the first call there and kept until
// the pool goes. At most max_streams streams and max_captures captures: a program that keeps making new ones gets an
// InputError at the next one rather than an unbounded amount of device memory.
class StreamScratchPool {
 public:
  // The first stream's scratch uses `lent` as its workspace where it is non-null.
  StreamScratchPool(std::size_t workspace_bytes, void* lent, int max_streams, int max_captures,
                    std::size_t max_bytes = 0);

  StreamScratch& of(cudaStream_t s);

  std::size_t streams() const { return streams_; }
  std::size_t captures() const { return by_stream_.size() - streams_; }
  std::size_t device_bytes() const;

 private:
  std::size_t workspace_bytes_;
  void* lent_;
  int max_streams_, max_captures_;
  ScratchBudget budget_;
  std::size_t streams_ = 0;
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
