// The ncu command line that profiles exactly one case's timed calls, and the one that reads a report back.
//
// What selects the kernels: --nvtx --nvtx-include gemmtune@<case range>/ (nvtx/case_range.hpp). The profiled
// `gemmtune run` opens that range around its timed calls only, so warm-up calls, verification and every other
// case stay out by construction; checked on an H100 with ncu 2025.3.1 against a workload with warm-up calls outside
// the range and a second case whose range name extends the first's. --launch-skip is therefore never needed, and
// --launch-count only caps the profile at the run's timed calls times the most kernels one call can launch.
#pragma once

#include <string>
#include <vector>

#include "problem/candidate.hpp"
#include "problem/gemm_problem.hpp"
#include "profiler/ncu_section_set.hpp"

namespace gemmtune {

// ncu --cache-control. None leaves L2 as the previous kernel left it, as in the sweep's back-to-back calls:
// DEVICE.md measured ncu durations 0.6–5.6% above CUPTI's with none and 1–14% above with all (ncu's default, which
// flushes every cache before each kernel and pass). All gives DRAM bytes that do not depend on what ran before.
enum class NcuCacheControl { None, All };
const char* to_string(NcuCacheControl c);                          // "none", "all"
NcuCacheControl parse_ncu_cache_control(const std::string& text);  // throws InputError

// The most kernels one call launches: the GEMM, a split-k reduction and our epilogue kernel after cuBLASLt.
inline constexpr int kMaxKernelsPerCall = 3;

struct NcuCommandOptions {
  std::string ncu = "ncu";
  NcuSectionSet sections;
  NcuCacheControl cache_control = NcuCacheControl::None;
  int profiled_calls = 3;    // the timed calls of the profiled run, each profiled
  std::string export_path;   // the report, "<dir>/<ncu_report_stem>.ncu-rep"
  std::string kernel_regex;  // optional: only kernels whose demangled name matches
};

// ncu ... -- followed by target_argv (the `gemmtune run` of the same case and candidate).
std::vector<std::string> ncu_profile_argv(const GemmProblem& p, const Candidate& c, const NcuCommandOptions& o,
                                          const std::vector<std::string>& target_argv);

// A file name for the case's report: the problem key and candidate id with every character outside
// [A-Za-z0-9._-] made '_', then "__cc-none" or "__cc-all", which `ncu import` reads back.
std::string ncu_report_stem(const GemmProblem& p, const Candidate& c, NcuCacheControl cache_control);
// "none" or "all" from a report path made by ncu_report_stem; "unknown" for any other name.
std::string cache_control_of_report(const std::string& report_path);

// ncu --import REPORT --csv --page raw --print-units base: one row per kernel, metric values in base units.
std::vector<std::string> ncu_import_argv(const std::string& ncu, const std::string& report_path);

}  // namespace gemmtune
