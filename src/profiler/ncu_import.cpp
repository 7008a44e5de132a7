#include "profiler/ncu_import.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "problem/validate.hpp"
#include "profiler/ncu_nvtx_stack.hpp"

namespace gemmtune {
namespace {

constexpr const char* kStallPrefix = "smsp__average_warps_issue_stalled_";
constexpr const char* kStallSuffix = "_per_issue_active.ratio";
constexpr std::size_t kTopStalls = 3;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// ncu's sampled counters overshoot 100% by a little (an L2 hit rate of 104.35% in the H100 fixture); a percentage
// beyond this is no measurement.
constexpr double kMaxPercent = 120;

// The metrics of one kernel row, each checked against what the GPU can report before it is converted or stored:
// a report edited by hand or damaged in transit is refused, naming the row and the metric.
class CheckedRow {
 public:
  CheckedRow(const NcuRawTable& t, std::size_t row, const std::string& report_path)
      : table_(t), row_(row), at_(report_path, "kernel row " + std::to_string(row)) {}

  // The value in the column's base unit (ns, bytes), within [lo, hi]; nullopt when the report lacks it.
  std::optional<double> base(const std::string& column, double lo, double hi) const {
    const std::optional<double> v = table_.base_value(row_, column);
    if (v) require_in_range(at_, column, *v, lo, hi);
    return v;
  }
  std::optional<double> plain(const std::string& column, double lo, double hi) const {
    const std::optional<double> v = table_.value(row_, column);
    if (v) require_in_range(at_, column, *v, lo, hi);
    return v;
  }
  double percent_or_missing(const std::string& column) const { return plain(column, 0, kMaxPercent).value_or(-1.0); }
  const FieldContext& at() const { return at_; }

 private:
  const NcuRawTable& table_;
  std::size_t row_;
  FieldContext at_;
};

constexpr double kMaxBytes = 1e18;
constexpr double kMaxSharedMemBytes = 1 << 24;  // far above any GPU's shared memory per block

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
    if (!(v > 0)) continue;
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
    const CheckedRow checked(table, row, report_path);
    NcuKernelMetrics m;
    m.problem_key = c->problem_key;
    m.candidate_id = c->candidate_id;
    try {
      parse_canonical_problem_key(m.problem_key);
      parse_canonical_candidate_id(m.candidate_id);
    } catch (const InputError& e) {
      checked.at().fail(kNcuPushPopColumn, e.what());
    }
    m.kernel_name = table.text(row, "Kernel Name");
    if (const auto ns = checked.base("gpu__time_duration.sum", 0, kMaxTimeUs * 1e3)) m.duration_us = *ns / 1e3;
    m.sm_throughput_pct = checked.percent_or_missing("sm__throughput.avg.pct_of_peak_sustained_elapsed");
    m.memory_throughput_pct =
        checked.percent_or_missing("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed");
    m.dram_throughput_pct = checked.percent_or_missing("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed");
    m.achieved_occupancy_pct = checked.percent_or_missing("sm__warps_active.avg.pct_of_peak_sustained_active");
    if (const auto regs = checked.plain("launch__registers_per_thread", 0, 255))
      m.registers_per_thread = static_cast<int>(*regs);
    const auto smem_static = checked.base("launch__shared_mem_per_block_static", 0, kMaxSharedMemBytes);
    const auto smem_dynamic = checked.base("launch__shared_mem_per_block_dynamic", 0, kMaxSharedMemBytes);
    if (smem_static && smem_dynamic) m.shared_mem_bytes = static_cast<std::int64_t>(*smem_static + *smem_dynamic);
    if (const auto bytes = checked.base("dram__bytes.sum", 0, kMaxBytes)) {
      m.dram_bytes = *bytes;
    } else {
      const auto read = checked.base("dram__bytes_read.sum", 0, kMaxBytes);
      const auto write = checked.base("dram__bytes_write.sum", 0, kMaxBytes);
      if (read && write) m.dram_bytes = *read + *write;
    }
    m.l2_hit_rate_pct = checked.percent_or_missing("lts__t_sector_hit_rate.pct");
    if (const auto hz = checked.plain("gpc__cycles_elapsed.avg.per_second", 0, kMaxSmClockMhz * 1e6)) {
      require_sm_clock(checked.at(), "gpc__cycles_elapsed.avg.per_second", *hz / 1e6);
      m.clock_mhz = *hz / 1e6;
    }
    for (const auto& [reason, column] : stalls) checked.plain(column, 0, 1e6);
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
