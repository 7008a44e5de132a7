// NcuKernelMetrics: what `gemmtune ncu import` keeps of one profiled kernel, tied to the case it belongs to.
// Percentages are of the GPU's peak as ncu reports them; -1 marks a metric the report did not contain.
#pragma once

#include <cstdint>
#include <string>

namespace gemmtune {

struct NcuKernelMetrics {
  std::string device_key;
  std::string problem_key;     // the case, recovered from the NVTX range "gemmtune/<problem key>/<candidate id>"
  std::string candidate_id;
  std::string kernel_name;
  int launch_index = 0;        // order of this kernel within the profiled call
  double duration_us = -1;     // gpu__time_duration.sum
  double sm_throughput_pct = -1;
  double memory_throughput_pct = -1;
  double dram_throughput_pct = -1;
  double achieved_occupancy_pct = -1;
  int registers_per_thread = -1;
  std::int64_t shared_mem_bytes = -1;  // static + dynamic per block
  double dram_bytes = -1;              // dram__bytes.sum
  double l2_hit_rate_pct = -1;
  // gpc__cycles_elapsed.avg.per_second: under ncu the GPU idles between replays and a kernel often runs below its
  // boost clock, which alone makes ncu's duration longer than the sweep's (1.81 against 1.98 GHz on the H100).
  double clock_mhz = -1;
  std::string top_stalls;      // JSON array of {"reason": ..., "pct": ...}, largest first
  std::string cache_control;   // "none" or "all": how ncu treated caches; durations differ by design
  std::string report_path;
  std::string imported_at;     // ISO-8601 UTC
};

}  // namespace gemmtune
