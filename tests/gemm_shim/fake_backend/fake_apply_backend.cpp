// A stand-in for libgemmtune_apply_backend.so (src/apply/backend/apply_backend.h), so the router's decisions are
// tested on a CPU (tests/gemm_shim/router_test.cpp). Its rule, by problem key:
//   ":tf32"   no usable exact entry
//   "17x"     first asked during a capture, routed when asked again
//   "33x"     routed, but every run fails
//   "96x"     routed, but every run is refused as one on another GPU without an exact entry
//   "56x"     routed as "cublas/sgemm", cuBLAS's own choice
//   "88x"     routed as "lt/fake+pad", a padded entry that saved 5 us a call in its sweep
//   "99x"     routed as "lt/fake+pad", a padded entry that saved 40 us a call
//   other     routed as "own/fake"
// Each run it accepts is a line "RUN <key> <A> <B> <Y> on <stream>" in $FAKE_BACKEND_LOG, and, opened to record,
// each problem it refuses a line "MISS <key>"; with $FAKE_BACKEND_NO_GPU set it does not open. With
// $FAKE_BACKEND_DRAINED set every stream has drained: a run asked to yield then returns DRAINED (a line "YIELD <key>").
#include "apply/backend/apply_backend.h"

#include "trace/fake_cublas/fake_cublas.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define FAKE_BACKEND_EXPORT extern "C" __attribute__((visibility("default")))

struct gemmtune_apply_backend {
  bool record = false;
  std::vector<std::string> problems;
  std::vector<std::string> asked;
};

namespace {

void put(char* text, std::size_t size, const std::string& line) { std::snprintf(text, size, "%s", line.c_str()); }

bool has(const std::string& key, const char* part) { return key.find(part) != std::string::npos; }

void log_line(const std::string& line) {
  if (const char* path = std::getenv("FAKE_BACKEND_LOG")) {
    if (std::FILE* f = std::fopen(path, "a")) {
      std::fprintf(f, "%s\n", line.c_str());
      std::fclose(f);
    }
  }
}

}  // namespace

FAKE_BACKEND_EXPORT gemmtune_apply_backend* gemmtune_apply_open(const char*, int, int record, std::size_t, char* text,
                                                                std::size_t size) {
  if (std::getenv("FAKE_BACKEND_NO_GPU")) {
    put(text, size, "no GPU (fake)");
    return nullptr;
  }
  // A use of the cuBLAS it links, as the real backend's runtime uses its cuBLAS, so the link keeps it a dependency.
  if (!fake_cublas_last_call()) return nullptr;
  auto* b = new gemmtune_apply_backend;
  b->record = record != 0;
  return b;
}

FAKE_BACKEND_EXPORT int gemmtune_apply_problem(gemmtune_apply_backend* b, const char* problem_key, void*, int* id,
                                               double* saving_us, char* text, std::size_t size) {
  const std::string key = problem_key;
  if (has(key, ":tf32")) {
    if (b->record) log_line("MISS " + key);
    put(text, size, "no usable exact entry (fake)");
    return GEMMTUNE_APPLY_NOT_ROUTED;
  }
  if (has(key, "17x") && b->asked.end() == std::find(b->asked.begin(), b->asked.end(), key)) {
    b->asked.push_back(key);
    put(text, size, "first seen during a CUDA graph capture (fake)");
    return GEMMTUNE_APPLY_CAPTURING;
  }
  b->problems.push_back(key);
  *id = static_cast<int>(b->problems.size() - 1);
  const bool padded = has(key, "88x") || has(key, "99x");
  put(text, size, has(key, "56x") ? "cublas/sgemm" : padded ? "lt/fake+pad" : "own/fake");
  *saving_us = has(key, "88x") ? 5 : has(key, "99x") ? 40 : -1;
  return GEMMTUNE_APPLY_ROUTED;
}

FAKE_BACKEND_EXPORT int gemmtune_apply_forward(gemmtune_apply_backend* b, int id, const float* a, const float* bb,
                                               const float*, float* y, float*, void* stream, int yield_if_drained,
                                               char* text, std::size_t size) {
  const std::string& key = b->problems.at(static_cast<std::size_t>(id));
  if (yield_if_drained && std::getenv("FAKE_BACKEND_DRAINED")) {
    log_line("YIELD " + key);
    put(text, size, "drained (fake)");
    return GEMMTUNE_APPLY_DRAINED;
  }
  if (has(key, "33x")) {
    put(text, size, "fake failure");
    return GEMMTUNE_APPLY_FAILED;
  }
  if (has(key, "96x")) {
    put(text, size, "another GPU (fake)");
    return GEMMTUNE_APPLY_NOT_ROUTED;
  }
  char line[256];
  std::snprintf(line, sizeof(line), "RUN %s %p %p %p on %p", key.c_str(), static_cast<const void*>(a),
                static_cast<const void*>(bb), static_cast<void*>(y), stream);
  log_line(line);
  return GEMMTUNE_APPLY_ROUTED;
}
