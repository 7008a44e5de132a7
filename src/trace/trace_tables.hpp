// The tables of a trace, in the form of `nsys stats` (cuda_gpu_kern_sum, nvtx_sum) that the seed's workflow reads:
// a summary, kernels, categories, NVTX ranges, kernels per top-level range and, with --gemms, the GEMM problems and
// how much of the GEMM kernel time the recorded calls cover.
// All times are GPU times from CUPTI activity records; Time (%) is a share of all kernel time unless a table says
// otherwise.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "problem/gemm_problem.hpp"
#include "trace/category_rules.hpp"
#include "trace/table.hpp"
#include "trace/trace.hpp"

namespace gemmtune {

// Distribution of a set of durations in ns.
struct DurationStats {
  std::uint64_t count = 0;
  double total = 0, mean = 0, median = 0, min = 0, max = 0, stddev = 0;  // stddev: sample (n − 1)
};
DurationStats duration_stats(std::vector<double> ns);

// Busy time: the union of kernel, memcpy and memset intervals (overlaps counted once), and the idle gaps between
// the first activity's start and the last one's end.
struct GpuBusy {
  std::uint64_t busy_ns = 0;
  std::uint64_t span_ns = 0;
  std::uint64_t gaps = 0;
  std::uint64_t idle_ns = 0;
  std::uint64_t longest_gap_ns = 0;
};
GpuBusy gpu_busy(const Trace& t);

// A kernel's table name (demangled) and category, computed once per distinct name.
class KernelNames {
 public:
  KernelNames(const Trace& t, const CategoryRules& rules);
  const std::string& name(std::size_t kernel) const { return names_[kernel]; }
  const std::string& category(std::size_t kernel) const { return categories_[kernel]; }

 private:
  std::vector<std::string> names_, categories_;
};

// One row of the GEMM table: the calls of one distinct problem (or one untunable call shape), through whichever
// entry points.
struct GemmUse {
  std::string label;        // the problem key, or the call's shape for one that is not tunable
  bool tunable = false;
  GemmProblem problem;
  std::string reason;       // why not tunable
  std::string apis;         // the entry points that ran it: "cublasLtMatmul", "cublasSgemm_v2,cublasGemmEx"
  std::uint64_t calls = 0;
  std::uint64_t kernels = 0;
  double gpu_ns = 0;
};
// Sorted by GPU time, largest first.
std::vector<GemmUse> gemm_uses(const Trace& t);

// How much of the GEMM-category kernel time ran for a recorded call (any call the shim saw), and for a call whose
// problem is tunable.
struct GemmCoverage {
  double gemm_ns = 0, recorded_ns = 0, tunable_ns = 0;
  // recorded_ns / gemm_ns; nullopt without GEMM kernel time.
  std::optional<double> fraction() const;
  std::optional<double> tunable_fraction() const;
};
GemmCoverage gemm_coverage(const Trace& t, const KernelNames& names);

// Which top-level NVTX range launched each kernel: index into t.ranges, or -1. A kernel belongs to the range of
// its own process that holds its launch time, on its launching thread where that thread has one, else on any thread
// (PyTorch runs the backward's launches on an autograd thread while the main thread sits in the "backward" range).
std::vector<long> kernel_ranges(const Trace& t);

Table summary_table(const Trace& t, const KernelNames& names);
Table kernel_table(const Trace& t, const KernelNames& names);
Table category_table(const Trace& t, const KernelNames& names);
Table nvtx_table(const Trace& t);
Table range_table(const Trace& t, const KernelNames& names);
Table range_kernel_table(const Trace& t, const KernelNames& names);
Table gemm_table(const Trace& t, const KernelNames& names);

// Every table that has something to show, in print order; `only` (a table id) selects one; InputError if unknown.
std::vector<Table> trace_tables(const Trace& t, const CategoryRules& rules, const std::string& only = "");
// The table ids, for --table's help and its error.
std::vector<std::string> trace_table_ids();

// "12.3 ms" or "456.7 us": for lines printed beside the tables.
std::string format_duration_ns(double ns);

}  // namespace gemmtune
