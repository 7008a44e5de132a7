#include "runtime/call_graphs.hpp"

#include <functional>
#include <tuple>

#include "cuda/stream.hpp"

namespace gemmtune::runtime {

namespace {

auto fields(const ExactCall& c) {
  return std::tie(c.x.A, c.x.B, c.x.bias, c.x.Y, c.x.Z, c.x.seed, c.x.offset, c.x.offset_ptr, c.stream, c.scratch);
}

template <class T>
std::uint64_t word_of(T* p) {
  return reinterpret_cast<std::uintptr_t>(p);
}
std::uint64_t word_of(std::uint64_t v) { return v; }

}  // namespace

bool ExactCall::operator==(const ExactCall& o) const { return fields(*this) == fields(o); }

std::size_t ExactCallHash::operator()(const ExactCall& c) const {
  std::size_t h = 0;
  // boost::hash_combine's mixing: pointers to device memory differ mostly in their middle bits.
  const auto mix = [&h](std::uint64_t word) {
    h ^= std::hash<std::uint64_t>{}(word) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  };
  std::apply([&](const auto&... f) { (mix(word_of(f)), ...); }, fields(c));
  return h;
}

// A first sight is remembered; a later one is ready where its stream has no work left.
bool CallGraphs::ready_to_capture(const ExactCall& call) {
  if (seen_.count(call) == 0) {
    remember(call);
    return false;
  }
  if (!stream_drained(call.stream)) return false;  // run() is never asked for a call the caller is capturing
  seen_.erase(call);
  return true;
}

void CallGraphs::remember(const ExactCall& call) {
  if (seen_.size() >= kMaxSeen) seen_.clear();
  seen_.insert(call);
}

bool CallGraphs::repeats(const ExactCall& call) {
  if (off_) return false;
  if (graphs_.count(call) != 0) return true;
  if (seen_.count(call) != 0) return graphs_.size() < kMaxGraphs;
  remember(call);
  return false;
}

void CallGraphs::turn_off() {
  off_ = true;
  seen_.clear();
  (void)cudaGetLastError();  // a failed capture's error is not sticky: the call then launches as before
}

}  // namespace gemmtune::runtime
