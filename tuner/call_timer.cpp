#include "tuner/call_timer.hpp"

#include <deque>

#include "cuda/stream.hpp"
#include "cupti/cupti_kernel_timer.hpp"

namespace gemmtune {
namespace {

class CuptiCallTimer final : public CallTimer {
 public:
  void begin_call(cudaStream_t) override { timer_.begin_call(); }
  void end_call(cudaStream_t) override { timer_.end_call(); }
  std::vector<double> collect() override { return timer_.collect(); }
  const char* name() const override { return "cupti"; }

 private:
  CuptiKernelTimer timer_;
};

class EventCallTimer final : public CallTimer {
 public:
  void begin_call(cudaStream_t s) override { next_event().record(s); }
  void end_call(cudaStream_t s) override { next_event().record(s); }
  std::vector<double> collect() override {
    std::vector<double> us;
    for (std::size_t i = 0; i + 1 < used_; i += 2)
      us.push_back(1e3 * static_cast<double>(events_[i + 1].elapsed_ms_since(events_[i])));
    used_ = 0;
    return us;
  }
  const char* name() const override { return "events"; }

 private:
  // Events are reused across batches; a deque keeps references stable while it grows.
  CudaEvent& next_event() {
    if (used_ == events_.size()) events_.emplace_back();
    return events_[used_++];
  }
  std::deque<CudaEvent> events_;
  std::size_t used_ = 0;
};

}  // namespace

std::unique_ptr<CallTimer> make_call_timer(bool force_events, std::string* warning) {
  if (!force_events) {
    try {
      return std::make_unique<CuptiCallTimer>();
    } catch (const Error& e) {
      if (warning) *warning = std::string("CUPTI unavailable (") + e.what() + "); timing with CUDA events instead";
    }
  }
  return std::make_unique<EventCallTimer>();
}

}  // namespace gemmtune
