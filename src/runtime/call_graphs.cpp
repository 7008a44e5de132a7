#include "runtime/call_graphs.hpp"

#include <cmath>
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

bool replay_may_cost_more(std::size_t graph_nodes, bool replayed_last, bool launches_overlap) {
  return launches_overlap || (graph_nodes <= 2 && !replayed_last);
}

bool launches_overlap(std::size_t call_programmatic_edges, std::size_t pair_programmatic_edges) {
  return pair_programmatic_edges > 2 * call_programmatic_edges;
}

bool launches_every_call(const GemmProblem& gemm, const Candidate& c) {
  return gemm.m == 1 && c.backend == Backend::Lt && c.lt.splitk > 1;
}

bool launch_hides_under_gpu(const CallCosts& costs) {
  const double gpu_at_least = costs.replay_gpu_us - costs.replay_host_us;  // NaN or infinite until both are measured
  return std::isfinite(gpu_at_least) && costs.launch_host_us < gpu_at_least;
}

bool CallGraphs::launch_ahead(const ExactCall& call, const CudaGraphExec& graph) {
  if (!replay_may_cost_more(graph.nodes(), last_ && *last_ == call, launches_overlap_.value_or(false))) return false;
  read_replay_timer();
  if (!launch_hides_under_gpu(costs_) || stream_drained(call.stream)) return false;
  ++launches_ahead_;
  return true;
}

// Replays are sampled between two events until four samples are read, then at every power of two of the plan's
// replays (the clocks may still be rising at the first), one sample in flight at a time; the least is kept.
void CallGraphs::replay(const ExactCall& call, const CudaGraphExec& graph) {
  bool sampled = false;
  if (!timer_ || timer_->samples < 4 || (replays_ & (replays_ - 1)) == 0) {
    read_replay_timer();
    if (!timer_) timer_ = std::make_unique<ReplayTimer>();
    sampled = !timer_->pending;
  }
  if (sampled) timer_->start.record(call.stream);
  const auto start = std::chrono::steady_clock::now();
  graph.launch(call.stream);
  costs_.replay_host_us = std::min(costs_.replay_host_us, us_since(start));
  if (sampled) {
    timer_->end.record(call.stream);
    timer_->pending = true;
  }
  last_ = call;
  ++replays_;
}

void CallGraphs::read_replay_timer() {
  if (!timer_ || !timer_->pending || !timer_->end.done()) return;
  timer_->pending = false;
  ++timer_->samples;
  costs_.replay_gpu_us = std::min(costs_.replay_gpu_us, 1000.0 * timer_->end.elapsed_ms_since(timer_->start));
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
