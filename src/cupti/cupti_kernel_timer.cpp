#include "cupti/cupti_kernel_timer.hpp"

#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <unordered_map>

#include "cupti/cupti_call.hpp"
#include "trace/raw_format.hpp"

namespace gemmtune {
namespace {

constexpr std::size_t kBufferBytes = 8u << 20;
constexpr std::size_t kRecordAlignment = 8;
constexpr auto kExternalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

struct KernelSpan {
  std::uint64_t start = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t end = 0;
};

// CUPTI delivers buffers on its own thread through plain C callbacks, so the records land in process-wide state.
struct ActivityState {
  std::mutex mu;
  std::unordered_map<std::uint32_t, std::uint64_t> call_of_correlation;  // CUDA API correlation id -> our call id
  std::unordered_map<std::uint32_t, KernelSpan> kernels_of_correlation;  // kernels launched by one API call
  std::atomic<bool> active{false};
};

ActivityState& state() {
  static ActivityState s;
  return s;
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kRecordAlignment, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid) {
  ActivityState& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
      if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        KernelSpan& span = s.kernels_of_correlation[k->correlationId];
        span.start = std::min<std::uint64_t>(span.start, k->start);
        span.end = std::max<std::uint64_t>(span.end, k->end);
      } else if (record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
        const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        if (e->externalKind == kExternalKind) s.call_of_correlation[e->correlationId] = e->externalId;
      }
    }
  }
  std::free(buffer);
}

// External correlation records are emitted for runtime and driver API calls; cuBLASLt launches through both.
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                         CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};

}  // namespace

CuptiKernelTimer::CuptiKernelTimer() {
  // Under `gemmtune trace` the injection library owns CUPTI's activity buffers; registering ours would take its
  // records away. The caller times with CUDA events instead, as under ncu.
  if (std::getenv(trace_raw::kDirEnv)) throw CheckError("CUPTI's activity records belong to gemmtune trace here");
  ActivityState& s = state();
  if (s.active.exchange(true)) throw CheckError("only one CuptiKernelTimer may exist at a time");
  try {
    GT_CUPTI_CALL(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    for (CUpti_ActivityKind kind : kKinds) GT_CUPTI_CALL(cuptiActivityEnable(kind));
  } catch (...) {
    for (CUpti_ActivityKind kind : kKinds) cuptiActivityDisable(kind);
    s.active = false;
    throw;
  }
}

CuptiKernelTimer::~CuptiKernelTimer() {
  if (in_call_) cuptiActivityPopExternalCorrelationId(kExternalKind, nullptr);
  for (CUpti_ActivityKind kind : kKinds) cuptiActivityDisable(kind);
  cuptiActivityFlushAll(1);
  ActivityState& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.call_of_correlation.clear();
    s.kernels_of_correlation.clear();
  }
  s.active = false;
}

void CuptiKernelTimer::begin_call() {
  if (in_call_) throw CheckError("CuptiKernelTimer::begin_call inside a call");
  const std::uint64_t id = next_call_id_++;
  GT_CUPTI_CALL(cuptiActivityPushExternalCorrelationId(kExternalKind, id));
  call_ids_.push_back(id);
  in_call_ = true;
}

void CuptiKernelTimer::end_call() {
  if (!in_call_) throw CheckError("CuptiKernelTimer::end_call without begin_call");
  std::uint64_t id = 0;
  GT_CUPTI_CALL(cuptiActivityPopExternalCorrelationId(kExternalKind, &id));
  in_call_ = false;
}

std::vector<double> CuptiKernelTimer::collect() {
  GT_CUPTI_CALL(cuptiActivityFlushAll(1));
  ActivityState& s = state();
  std::unordered_map<std::uint64_t, KernelSpan> spans;  // our call id -> span of all its kernels
  {
    std::lock_guard<std::mutex> lock(s.mu);
    for (const auto& [corr, kspan] : s.kernels_of_correlation) {
      const auto it = s.call_of_correlation.find(corr);
      if (it == s.call_of_correlation.end()) continue;  // a kernel outside any timed call
      KernelSpan& span = spans[it->second];
      span.start = std::min(span.start, kspan.start);
      span.end = std::max(span.end, kspan.end);
    }
    s.call_of_correlation.clear();
    s.kernels_of_correlation.clear();
  }
  std::vector<double> us;
  us.reserve(call_ids_.size());
  for (std::uint64_t id : call_ids_) {
    const auto it = spans.find(id);
    if (it == spans.end() || it->second.end <= it->second.start)
      throw CheckError("CUPTI recorded no kernel for timed call " + std::to_string(id));
    us.push_back(static_cast<double>(it->second.end - it->second.start) * 1e-3);
  }
  call_ids_.clear();
  return us;
}

}  // namespace gemmtune
