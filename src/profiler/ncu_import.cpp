#include "profiler/ncu_import.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include <nlohmann/json.hpp>

#include "profiler/ncu_nvtx_stack.hpp"

namespace gemmtune {
namespace {

constexpr const char* kStallPrefix = "smsp__average_warps_issue_stalled_";
constexpr const char* kStallSuffix = "_per_issue_active.ratio";
constexpr std::size_t kTopStalls = 3;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

double metric_or_missing(const NcuRawTable& t, std::size_t row, const std::string& column) {
  return t.base_value(row, column).value_or(-1.0);
}

// {reason: stalled warps per issue} for every stall column of the table. "selected" is the issuing state, not a
// stall, so it is left out.
std::vector<std::pair<std::string, std::string>> stall_columns(const NcuRawTable& t) {
  std::vector<std::pair<std::string, std::string>> columns;
  const std::string prefix = kStallPrefix;
  for (const std::string& name : t.column_names()) {
    if (name.rfind(prefix, 0) != 0 || !ends_with(name, kStallSuffix)) continue;
    const std::string reason = name.substr(prefix.size(), name.size() - prefix.size() - std::string(kStallSuffix).size());
    if (reason != "selected") columns.emplace_back(reason, name);
  }
  return columns;
}

// The largest stall reasons as a JSON array of {"reason", "pct"}, pct being the reason's share of all stalls.
std::string top_stalls(const NcuRawTable& t, std::size_t row,
                       const std::vector<std::pair<std::string, std::string>>& columns) {
  std::vector<std::pair<double, std::string>> stalls;
  double total = 0;
  for (const auto& [reason, column] : columns) {
    const double v = t.value(row, column).value_or(0.0);
    if (v <= 0) continue;
    stalls.emplace_back(v, reason);
    total += v;
  }
  std::sort(stalls.begin(), stalls.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < stalls.size() && i < kTopStalls; ++i)
    out.push_back({{"reason", stalls[i].second}, {"pct", 100.0 * stalls[i].first / total}});
  return out.dump();
}

// The shortest period p with names[i] == names[i % p] for all i and p dividing the count: the kernels of one call.
std::size_t call_period(const std::vector<std::string>& names) {
  for (std::size_t p = 1; p < names.size(); ++p) {
    if (names.size() % p != 0) continue;
    bool repeats = true;
    for (std::size_t i = p; i < names.size() && repeats; ++i) repeats = names[i] == names[i % p];
    if (repeats) return p;
  }
  return std::max<std::size_t>(names.size(), 1);
}

}  // namespace

const std::vector<std::string>& ncu_import_metrics() {
  static const std::vector<std::string> metrics = {
      "gpu__time_duration.sum",
      "sm__throughput.avg.pct_of_peak_sustained_elapsed",
      "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
      "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__warps_active.avg.pct_of_peak_sustained_active",
      "launch__registers_per_thread",
      "launch__shared_mem_per_block_static",
      "launch__shared_mem_per_block_dynamic",
      "dram__bytes.sum",
      "dram__bytes_read.sum",
      "dram__bytes_write.sum",
      "lts__t_sector_hit_rate.pct",
      "gpc__cycles_elapsed.avg.per_second",
  };
  return metrics;
}

std::string ncu_stall_column(const std::string& reason) { return kStallPrefix + reason + kStallSuffix; }

NcuImport import_ncu_kernels(const NcuRawTable& table, const std::string& cache_control,
                             const std::string& report_path) {
  NcuImport result;
  if (table.kernel_count() > 0) result.gpu_name = table.text(0, "device__attribute_display_name");
  const auto stalls = stall_columns(table);
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> rows_of_case;  // rows in profiling order

  for (std::size_t row = 0; row < table.kernel_count(); ++row) {
    const std::optional<CaseRangeParts> c = case_of_kernel(table.text(row, kNcuPushPopColumn));
    if (!c) {
      ++result.kernels_outside_cases;
      continue;
    }
    NcuKernelMetrics m;
    m.problem_key = c->problem_key;
    m.candidate_id = c->candidate_id;
    m.kernel_name = table.text(row, "Kernel Name");
    if (const auto ns = table.base_value(row, "gpu__time_duration.sum")) m.duration_us = *ns / 1e3;
    m.sm_throughput_pct = metric_or_missing(table, row, "sm__throughput.avg.pct_of_peak_sustained_elapsed");
    m.memory_throughput_pct =
        metric_or_missing(table, row, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed");
    m.dram_throughput_pct = metric_or_missing(table, row, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed");
    m.achieved_occupancy_pct = metric_or_missing(table, row, "sm__warps_active.avg.pct_of_peak_sustained_active");
    if (const auto regs = table.value(row, "launch__registers_per_thread")) m.registers_per_thread = static_cast<int>(*regs);
    const auto smem_static = table.base_value(row, "launch__shared_mem_per_block_static");
    const auto smem_dynamic = table.base_value(row, "launch__shared_mem_per_block_dynamic");
    if (smem_static && smem_dynamic) m.shared_mem_bytes = static_cast<std::int64_t>(*smem_static + *smem_dynamic);
    if (const auto bytes = table.base_value(row, "dram__bytes.sum")) {
      m.dram_bytes = *bytes;
    } else {
      const auto read = table.base_value(row, "dram__bytes_read.sum");
      const auto write = table.base_value(row, "dram__bytes_write.sum");
      if (read && write) m.dram_bytes = *read + *write;
    }
    m.l2_hit_rate_pct = metric_or_missing(table, row, "lts__t_sector_hit_rate.pct");
    if (const auto hz = table.value(row, "gpc__cycles_elapsed.avg.per_second")) m.clock_mhz = *hz / 1e6;
    m.top_stalls = top_stalls(table, row, stalls);
    m.cache_control = cache_control;
    m.report_path = report_path;
    rows_of_case[{m.problem_key, m.candidate_id}].push_back(result.kernels.size());
    result.kernels.push_back(std::move(m));
  }

  for (const auto& [which_case, indices] : rows_of_case) {
    std::vector<std::string> names;
    for (std::size_t i : indices) names.push_back(result.kernels[i].kernel_name);
    const std::size_t period = call_period(names);
    for (std::size_t j = 0; j < indices.size(); ++j) result.kernels[indices[j]].launch_index = static_cast<int>(j % period);
  }
  return result;
}

}  // namespace gemmtune
