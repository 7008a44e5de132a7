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
#include "gemmtune/runtime.hpp"

#define APPLY_BACKEND_EXPORT extern "C" __attribute__((visibility("default")))

struct gemmtune_apply_backend {
  std::string db;
  gemmtune::RuntimeOptions options;
  std::mutex mu;  // guards runtimes and problems; the runtime serializes its own calls
  // One runtime per GPU, made at that GPU's first routable problem. Never destroyed: a program's last GEMMs may run
  // during its static destruction, and a runtime's destructor would write misses that only --record asked for.
  std::map<int, gemmtune::Runtime*> runtimes;
  struct Problem {
    int device;
    gemmtune::Runtime* runtime;
    gemmtune::GemmProblem problem;
  };
  std::vector<Problem> problems;  // by id
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

}  // namespace

APPLY_BACKEND_EXPORT gemmtune_apply_backend* gemmtune_apply_open(const char* db, int fp32_equivalent, char* text,
                                                                 std::size_t text_size) {
  try {
    gemmtune::cuda_device_count();
    auto b = std::make_unique<gemmtune_apply_backend>();
    b->db = db && *db ? db : gemmtune::default_db_path();
    // Only exact entries are routed, so the first-use trials that judge stand-ins would time problems for nothing.
    b->options.confirm_standins = false;
    b->options.fp32_equivalent = fp32_equivalent != 0;
    return b.release();
  } catch (const std::exception& e) {
    put(text, text_size, e.what());
    return nullptr;
  }
}

APPLY_BACKEND_EXPORT int gemmtune_apply_problem(gemmtune_apply_backend* b, const char* problem_key, void* stream,
                                                int* id, char* text, std::size_t text_size) {
  try {
    const gemmtune::GemmProblem p = gemmtune::GemmProblem::parse_key(problem_key);
    // Resolving allocates and may ask cuBLASLt's heuristic: never inside a capture (the runtime refuses it too).
    if (capturing(static_cast<cudaStream_t>(stream))) {
      put(text, text_size, "first seen during a CUDA graph capture");
      return GEMMTUNE_APPLY_CAPTURING;
    }
    const std::lock_guard<std::mutex> lock(b->mu);
    const int device = current_device();
    gemmtune::Runtime& rt = runtime_of(*b, device);
    if (!rt.runs_exact_entry(p)) {
      put(text, text_size, "no usable exact entry: " + rt.explain(p));
      return GEMMTUNE_APPLY_NOT_ROUTED;
    }
    b->problems.push_back({device, &rt, p});
    *id = static_cast<int>(b->problems.size() - 1);
    put(text, text_size, rt.candidate_id(p));
    return GEMMTUNE_APPLY_ROUTED;
  } catch (const std::exception& e) {
    put(text, text_size, e.what());
    return GEMMTUNE_APPLY_NOT_ROUTED;
  }
}

APPLY_BACKEND_EXPORT int gemmtune_apply_forward(gemmtune_apply_backend* b, int id, const float* a, const float* bb,
                                                const float* bias, float* y, float* z, void* stream, char* text,
                                                std::size_t text_size) {
  try {
    gemmtune_apply_backend::Problem problem;
    {
      const std::lock_guard<std::mutex> lock(b->mu);
      problem = b->problems.at(static_cast<std::size_t>(id));
    }
    // A signature is decided on the GPU it was first seen on; the same call on another GPU goes to the library.
    if (current_device() != problem.device) {
      put(text, text_size, "called on another GPU than the one its entry was found for");
      return 1;
    }
    problem.runtime->forward(problem.problem, a, bb, bias, y, z, static_cast<cudaStream_t>(stream));
    return 0;
  } catch (const std::exception& e) {
    put(text, text_size, e.what());
    return 1;
  }
}

APPLY_BACKEND_EXPORT int gemmtune_apply_flush(gemmtune_apply_backend* b, char* text, std::size_t text_size) {
  try {
    const std::lock_guard<std::mutex> lock(b->mu);
    for (auto& [device, rt] : b->runtimes) rt->flush();
    return 0;
  } catch (const std::exception& e) {
    put(text, text_size, e.what());
    return 1;
  }
}
