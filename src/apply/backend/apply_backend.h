// libgemmtune_apply_backend.so: the runtime as the GEMM shim reaches it under `gemmtune apply`. The shim links
// neither CUDA nor the runtime (a traced program must not get a second CUDA runtime or cuBLASLt from it); it dlopens
// this library, RTLD_LOCAL | RTLD_DEEPBIND, at the first call it could route, so the runtime's own cuBLASLt calls
// bind to the cuBLASLt it was built with, not to the shim's interceptors or the program's library. A C interface,
// since the shim and this library need not share a C++ standard library's types.
//
// Every function returns 0 on success; on failure it returns non-zero and writes one line into `text`
// (text_size bytes, always terminated). Nothing throws across this interface.
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gemmtune_apply_backend gemmtune_apply_backend;

// Opens the backend: checks that a GPU is usable. db: the tuning db ("" or null: the default db); fp32_equivalent:
// RuntimeOptions::fp32_equivalent; record: write each problem without a usable exact entry to the db's misses table
// as soon as it is met (at exit the program's own libraries may already be torn down); max_scratch_bytes: the device
// memory each GPU's runtime may hold (RuntimeOptions::max_scratch_bytes, 0: no cap). Null (and why in text) when it
// cannot run anything.
gemmtune_apply_backend* gemmtune_apply_open(const char* db, int fp32_equivalent, int record, size_t max_scratch_bytes,
                                            char* text, size_t text_size);

enum {
  GEMMTUNE_APPLY_ROUTED = 0,      // problem: *id is the problem's id, text the candidate id; forward: enqueued
  GEMMTUNE_APPLY_NOT_ROUTED = 1,  // no usable exact entry (on this GPU), or an error deciding; text says why
  GEMMTUNE_APPLY_CAPTURING = 2,   // the stream is capturing a graph: not decided now, ask at a later call
  GEMMTUNE_APPLY_FAILED = 3,      // forward: the runtime failed on the call; text says how
  GEMMTUNE_APPLY_DRAINED = 4      // forward with yield_if_drained: the stream had no work left (text says so)
};
// Whether the problem (GemmProblem::key()) runs its exact cache entry on the current GPU. Resolves it on its first
// ask (outside any capture), so its later calls may be captured. Where ROUTED, *saving_us is the GPU time per call
// the entry saved over cuBLASLt's heuristic-first in its sweep (Runtime::exact_entry_saving_us), -1 where not known.
int gemmtune_apply_problem(gemmtune_apply_backend* backend, const char* problem_key, void* stream, int* id,
                           double* saving_us, char* text, size_t text_size);

// Runs problem `id` on `stream`, asynchronously; anything but ROUTED enqueued nothing and the call goes to the
// library. A call whose scratch would pass max_scratch_bytes is NOT_ROUTED, and so is every later call of that
// problem on that GPU. On a GPU other than the one the problem was decided on, it is decided there first, as by
// gemmtune_apply_problem: NOT_ROUTED or CAPTURING for this call alone where that GPU has no exact entry or the stream
// is capturing. yield_if_drained (apply/route.hpp: yields_when_drained): DRAINED, enqueueing nothing, where the
// stream is not capturing and all its work is done, so the host, not the GPU, bounds the program there.
int gemmtune_apply_forward(gemmtune_apply_backend* backend, int id, const float* a, const float* b, const float* bias,
                           float* y, float* z, void* stream, int yield_if_drained, char* text, size_t text_size);


#ifdef __cplusplus
}
#endif
