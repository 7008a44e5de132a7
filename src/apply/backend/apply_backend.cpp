#include "apply/backend/apply_backend.h"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "cuda/device_info.hpp"
#include "cuda/stream.hpp"
#include "gemmtune/runtime.hpp"

#define APPLY_BACKEND_EXPORT extern "C" __attribute__((visibility("default")))

struct gemmtune_apply_backend {
  std::string db;
  gemmtune::RuntimeOptions options;
  bool record = false;
  std::mutex mu;  // guards the tables; the runtime serializes its own calls
  // One runtime per GPU, made at that GPU's first routable problem. Never destroyed: a program's last GEMMs may run
  // during its static destruction, and a runtime's destructor would write misses that only record asks for (and, at
  // exit, after statics it uses may be gone: with record, each miss is written when it is met instead).
  std::map<int, gemmtune::Runtime*> runtimes;
  std::vector<gemmtune::GemmProblem> problems;  // by id
  // Per problem id and GPU: the runtime that runs its exact entry there, or null where that GPU has none.
  std::map<std::pair<int, int>, gemmtune::Runtime*> exact_on;
  std::map<std::pair<int, int>, std::string> why_not_on;
};

namespace {

void put(char* text, std::size_t size, const std::string& line) {
  if (text && size > 0) std::snprintf(text, size, "%s", line.c_str());
}

int current_device() {
  int device = 0;
  const cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) throw gemmtune::NoGpuError(std::string("cudaGetDevice: ") + cudaGetErrorString(e));
  return device;
}

gemmtune::Runtime& runtime_of(gemmtune_apply_backend& b, int device) {
  auto it = b.runtimes.find(device);
  if (it == b.runtimes.end())
    it = b.runtimes.emplace(device, new gemmtune::Runtime(b.db, device, b.options)).first;
  return *it->second;
}

bool capturing(cudaStream_t s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(s, &status) != cudaSuccess || status != cudaStreamCaptureStatusNone;
}

// Whether s has no work left; a capturing stream is never asked.
bool drained(cudaStream_t s) { return !capturing(s) && gemmtune::stream_drained(s); }

// Decides problem `id` on `device` (with b.mu held): resolving allocates and may ask cuBLASLt's heuristic, so never
// inside a capture (the runtime refuses that too), and the answer is kept for every later call there.
int decide(gemmtune_apply_backend& b, int id, int device, cudaStream_t stream, char* text, std::size_t text_size) {
  const std::pair<int, int> at{id, device};
  if (b.exact_on.count(at) == 0) {
    if (capturing(stream)) {
      put(text, text_size, "first seen on GPU " + std::to_string(device) + " during a CUDA graph capture");
      return GEMMTUNE_APPLY_CAPTURING;
    }
    const gemmtune::GemmProblem& p = b.problems[static_cast<std::size_t>(id)];
    gemmtune::Runtime& rt = runtime_of(b, device);
    const bool exact = rt.runs_exact_entry(p);
    b.exact_on[at] = exact ? &rt : nullptr;
    if (!exact) {
      std::string why = "no usable exact entry on GPU " + std::to_string(device) + ": " + rt.explain(p);
      try {
        if (b.record) rt.flush();  // resolving it recorded the miss
      } catch (const std::exception& e) {
        why += " (the miss could not be recorded: " + std::string(e.what()) + ")";
      }
      b.why_not_on[at] = why;
    }
  }
  if (!b.exact_on[at]) {
    put(text, text_size, b.why_not_on[at]);
    return GEMMTUNE_APPLY_NOT_ROUTED;
  }
  put(text, text_size, b.exact_on[at]->candidate_id(b.problems[static_cast<std::size_t>(id)]));
  return GEMMTUNE_APPLY_ROUTED;
}

}  // namespace

APPLY_BACKEND_EXPORT gemmtune_apply_backend* gemmtune_apply_open(const char* db, int fp32_equivalent, int record,
                                                                 std::size_t max_scratch_bytes, char* text,
                                                                 std::size_t text_size) {
  try {
    gemmtune::cuda_device_count();
    auto b = std::make_unique<gemmtune_apply_backend>();
    b->db = db && *db ? db : gemmtune::default_db_path();
    // Only exact entries are routed, so the first-use trials that judge stand-ins would time problems for nothing.
    b->options.confirm_standins = false;
    b->options.fp32_equivalent = fp32_equivalent != 0;
    b->options.max_scratch_bytes = max_scratch_bytes;
    b->record = record != 0;
    return b.release();
  } catch (const std::exception& e) {
    put(text, text_size, e.what());
    return nullptr;
  }
}

APPLY_BACKEND_EXPORT int gemmtune_apply_problem(gemmtune_apply_backend* b, const char* problem_key, void* stream,
                                                int* id, double* saving_us, char* text, std::size_t text_size) {
  try {
    const gemmtune::GemmProblem p = gemmtune::GemmProblem::parse_key(problem_key);
    const std::lock_guard<std::mutex> lock(b->mu);
    const int device = current_device();
    b->problems.push_back(p);
    const int added = static_cast<int>(b->problems.size() - 1);
    const int verdict = decide(*b, added, device, static_cast<cudaStream_t>(stream), text, text_size);
    if (verdict == GEMMTUNE_APPLY_ROUTED) {
      *id = added;
      *saving_us = b->exact_on[{added, device}]->exact_entry_saving_us(p).value_or(-1);
    } else {
      // Not routed (the shim passes the signature through) or asked again at a later call, under a new id.
      b->problems.pop_back();
      b->exact_on.erase({added, device});
      b->why_not_on.erase({added, device});
    }
    return verdict;
  } catch (const std::exception& e) {
    put(text, text_size, e.what());
    return GEMMTUNE_APPLY_NOT_ROUTED;
  }
}

APPLY_BACKEND_EXPORT int gemmtune_apply_forward(gemmtune_apply_backend* b, int id, const float* a, const float* bb,
                                                const float* bias, float* y, float* z, void* stream,
                                                int yield_if_drained, char* text, std::size_t text_size) {
  try {
    const auto s = static_cast<cudaStream_t>(stream);
    gemmtune::Runtime* rt = nullptr;
    gemmtune::GemmProblem problem;
    {
      const std::lock_guard<std::mutex> lock(b->mu);
      const int device = current_device();
      const auto it = b->exact_on.find({id, device});
      if (it != b->exact_on.end() && it->second) {
        rt = it->second;
      } else {
        const int verdict = decide(*b, id, device, s, text, text_size);
        if (verdict != GEMMTUNE_APPLY_ROUTED) return verdict;
        rt = b->exact_on[{id, device}];
      }
      problem = b->problems.at(static_cast<std::size_t>(id));
    }
    gemmtune::GemmOperands x;
    x.A = a;
    x.B = bb;
    x.bias = bias;
    x.Y = y;
    x.Z = z;
    // A repeat the runtime replays as one graph costs the host less than the library's own call: it is routed.
    if (yield_if_drained && drained(s) && !rt->replays(problem, x, s)) {
      put(text, text_size, "the stream had drained (the GPU waited for the host), and this entry costs more host time "
                           "than the library's call");
      return GEMMTUNE_APPLY_DRAINED;
    }
    rt->forward(problem, x, s);
    return GEMMTUNE_APPLY_ROUTED;
  } catch (const gemmtune::MemoryBudgetError& e) {
    // Nothing was enqueued. The problem's scratch does not fit: it stays with the library on this GPU from now on.
    try {
      const std::lock_guard<std::mutex> lock(b->mu);
      const std::pair<int, int> at{id, current_device()};
      b->exact_on[at] = nullptr;
      b->why_not_on[at] = std::string("over the memory budget (--memory-budget): ") + e.what();
      put(text, text_size, b->why_not_on[at]);
    } catch (const std::exception&) {
      put(text, text_size, e.what());
    }
    return GEMMTUNE_APPLY_NOT_ROUTED;
  } catch (const std::exception& e) {
    put(text, text_size, e.what());
    return GEMMTUNE_APPLY_FAILED;
  }
}
