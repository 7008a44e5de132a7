// Trace: what `gemmtune trace` recorded of one program run, as kept in the trace file (schema "gemmtune.trace",
// schema_version 2; version 1 files, whose GEMM calls are all cublasLtMatmul calls, are read too). Times are CUPTI
// timestamps in ns (one clock for GPU activity, API calls and NVTX ranges).
// Every table (trace/trace_tables.hpp) and the diff are computed from this, so a trace can be re-read with other
// category rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "trace/blas_call.hpp"
#include "trace/lt_call.hpp"

namespace gemmtune {

inline constexpr const char* kTraceSchema = "gemmtune.trace";
inline constexpr int kTraceSchemaVersion = 2;

struct TraceKernel {
  int pid = 0;
  std::uint32_t device = 0, stream = 0;
  std::uint64_t start = 0, end = 0;
  std::string name;  // as CUPTI reports it (mangled); tables demangle
  std::uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  // The API call that launched it, when recorded: its thread and time (to place it in an NVTX range).
  std::optional<std::uint32_t> launch_tid;
  std::uint64_t launch_ns = 0;
  // The cuBLAS or cuBLASLt call (index into Trace::gemms_called, and the call's number) it ran for, with --gemms.
  std::optional<std::size_t> gemm;
  std::uint32_t gemm_call = 0;

  std::uint64_t duration() const { return end > start ? end - start : 0; }
};

enum class CopyKind { Memcpy, Memset };

struct TraceCopy {
  int pid = 0;
  CopyKind kind = CopyKind::Memcpy;
  std::string direction;  // memcpy: "HtoD", "DtoH", "DtoD", ...; memset: empty
  std::uint32_t device = 0, stream = 0;
  std::uint64_t start = 0, end = 0;
  std::uint64_t bytes = 0;

  std::uint64_t duration() const { return end > start ? end - start : 0; }
};

// An NVTX range (push/pop or start/end). depth 0: no other range of the same thread encloses it (a top-level range).
struct TraceRange {
  int pid = 0;
  std::uint32_t tid = 0;
  std::string name, domain;
  std::uint64_t start = 0, end = 0;
  int depth = 0;

  std::uint64_t duration() const { return end > start ? end - start : 0; }
};

// One distinct GEMM call signature of one process (a cublasLtMatmul call, or a call of one of cuBLAS's GEMM entry
// points), and how often it was called.
struct TraceGemm {
  int pid = 0;
  std::uint64_t calls = 0;
  std::variant<LtCallDesc, BlasCallDesc> call;

  // "cublasLtMatmul", "cublasSgemm_v2", ...
  std::string api() const;
  GemmCallProblem problem() const;
};

struct TraceProcess {
  int pid = 0;
  bool complete = true;        // the injection wrote its end line (the process exited normally)
  std::uint64_t dropped = 0;   // records CUPTI dropped
  std::vector<std::string> errors;
};

struct Trace {
  std::vector<std::string> command;
  int exit_code = 0;
  double wall_ms = 0;      // fork to exit of the traced command, as gemmtune measured it
  bool gemms = false;      // recorded with --gemms
  std::string gpu_note;    // why no GPU was usable, when none was
  std::vector<TraceProcess> processes;
  std::vector<TraceKernel> kernels;
  std::vector<TraceCopy> copies;
  std::vector<TraceRange> ranges;
  std::vector<TraceGemm> gemms_called;
  // With --gemms: the share of GEMM-category kernel time that ran for a recorded call, as `gemmtune trace` computed
  // it with its category rules when it wrote the file (trace_tables.hpp, gemm_coverage); absent without GEMM time.
  std::optional<double> gemm_coverage;
};

// The trace file: throws InputError (exit 2) naming the file and what is wrong for a file that is not a trace of
// this schema version, or whose fields are missing or of the wrong type.
void write_trace_file(const Trace& t, const std::string& path);
Trace read_trace_file(const std::string& path);
nlohmann::json trace_to_json(const Trace& t);
Trace trace_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace gemmtune
