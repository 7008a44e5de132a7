// What `gemmtune apply` hands the program it runs: environment variables read by the GEMM shim
// (libgemmtune_trace_gemms.so) in that program, so a launcher that cannot run `gemmtune apply` (torchrun, a job
// script) sets the same variables and LD_PRELOAD itself (docs/apply.md).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "apply/route.hpp"

namespace gemmtune::apply {

inline constexpr const char* kApplyEnv = "GEMMTUNE_APPLY";                           // "1": route
inline constexpr const char* kDbEnv = "GEMMTUNE_APPLY_DB";                           // the tuning db; unset: default
inline constexpr const char* kFp32EquivalentEnv = "GEMMTUNE_APPLY_FP32_EQUIVALENT";  // "1": allow 3xtf32 for fp32
inline constexpr const char* kRecordEnv = "GEMMTUNE_APPLY_RECORD";                   // "1": write misses to the db
inline constexpr const char* kReportDirEnv = "GEMMTUNE_APPLY_REPORT_DIR";            // where <pid>.apply.json go
inline constexpr const char* kNoHostYieldEnv = "GEMMTUNE_APPLY_NO_HOST_YIELD";  // "1": ApplyOptions::host_yield off
inline constexpr const char* kMemoryEnv = "GEMMTUNE_APPLY_MEMORY_MIB";  // the runtime's device memory cap; 0: none

struct ApplySettings {
  bool on = false;
  std::string db;  // empty: the default db (Runtime's default_db_path())
  ApplyOptions options;
  bool record = false;
  std::string report_dir;  // empty: no report
  std::size_t memory_mib = 0;  // RuntimeOptions::max_scratch_bytes in MiB; 0: no cap
  std::string error;           // why the environment cannot be followed (then nothing is routed); empty: it can
};

// A memory budget as written ("512"): a whole number of MiB; nullopt where it is not one.
std::optional<std::size_t> parse_memory_mib(const std::string& text);

// The settings from the environment `lookup` gives (std::getenv in the shim). A flag is on only as "1": any other
// value is off, so a stray GEMMTUNE_APPLY=0 or =false never routes.
ApplySettings read_apply_settings(const std::function<const char*(const char*)>& lookup);

// The "NAME=VALUE" entries that give a child process these settings (every variable, so none is inherited).
std::vector<std::string> apply_environment(const ApplySettings& settings);

}  // namespace gemmtune::apply
