// From an ncu raw-page table to NcuKernelMetrics rows: each profiled kernel tied, through the NVTX range it ran in,
// to the case (problem key, candidate id) it belongs to.
#pragma once

#include <string>
#include <vector>

#include "problem/ncu_metrics.hpp"
#include "profiler/ncu_raw_table.hpp"

namespace gemmtune {

// The metrics the import reads. Every generated ncu command collects them, whatever sections it adds, so any
// report made by `gemmtune ncu` imports completely. Warp stall reasons come from the WarpStateStats section.
const std::vector<std::string>& ncu_import_metrics();

struct NcuImport {
  std::vector<NcuKernelMetrics> kernels;  // device_key left empty: the report does not know gemmtune's device key
  int kernels_outside_cases = 0;          // profiled kernels with no case range on their NVTX stack
  std::string gpu_name;                   // device__attribute_display_name of the first kernel
};

// launch_index is a kernel's position within its call: a case's kernels, in profiling order, repeat the sequence
// of kernel names one call launches, and the shortest period of that repetition is taken as one call.
// cache_control ("none", "all" or "unknown") and report_path are copied into every row.
NcuImport import_ncu_kernels(const NcuRawTable& table, const std::string& cache_control, const std::string& report_path);

// The warp-stall column for a reason ("long_scoreboard"); its value is warps stalled per issued instruction.
std::string ncu_stall_column(const std::string& reason);

}  // namespace gemmtune
