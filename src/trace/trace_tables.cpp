#include "trace/trace_tables.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

#include "common/error.hpp"
#include "trace/demangle.hpp"

namespace gemmtune {
namespace {

constexpr double kUs = 1e3;  // ns per us
constexpr double kMs = 1e6;  // ns per ms
constexpr const char* kNoRange = "(outside any range)";
constexpr const char* kNoLaunch = "(launch not recorded)";

TableCell us(double ns) { return TableCell::num(ns / kUs, 3); }
TableCell ms(double ns) { return TableCell::num(ns / kMs, 3); }
TableCell pct(double part, double whole) { return TableCell::num(whole > 0 ? 100.0 * part / whole : 0.0, 1); }

double kernel_total_ns(const Trace& t) {
  double total = 0;
  for (const TraceKernel& k : t.kernels) total += static_cast<double>(k.duration());
  return total;
}

// Rows of per-name statistics, sorted by total time, as cuda_gpu_kern_sum prints them.
struct NamedDurations {
  std::string name, category;
  std::vector<double> ns;
};

std::vector<NamedDurations> group_by_name(const Trace& t, const KernelNames& names,
                                         const std::vector<std::size_t>& kernels) {
  std::unordered_map<std::string, std::size_t> index;
  std::vector<NamedDurations> groups;
  for (std::size_t i : kernels) {
    const std::string& name = names.name(i);
    auto it = index.find(name);
    if (it == index.end()) {
      it = index.emplace(name, groups.size()).first;
      groups.push_back({name, names.category(i), {}});
    }
    groups[it->second].ns.push_back(static_cast<double>(t.kernels[i].duration()));
  }
  std::vector<std::pair<double, std::size_t>> order;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    double sum = 0;
    for (double d : groups[g].ns) sum += d;
    order.emplace_back(sum, g);
  }
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : groups[a.second].name < groups[b.second].name;
  });
  std::vector<NamedDurations> sorted;
  for (const auto& [sum, g] : order) sorted.push_back(std::move(groups[g]));
  return sorted;
}

std::vector<std::size_t> all_kernels(const Trace& t) {
  std::vector<std::size_t> out(t.kernels.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = i;
  return out;
}

std::string range_label(const TraceRange& r) { return r.domain.empty() ? r.name : r.domain + ":" + r.name; }

std::string command_line(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

}  // namespace

DurationStats duration_stats(std::vector<double> ns) {
  DurationStats s;
  s.count = ns.size();
  if (ns.empty()) return s;
  std::sort(ns.begin(), ns.end());
  for (double d : ns) s.total += d;
  s.mean = s.total / static_cast<double>(ns.size());
  const std::size_t mid = ns.size() / 2;
  s.median = ns.size() % 2 ? ns[mid] : 0.5 * (ns[mid - 1] + ns[mid]);
  s.min = ns.front();
  s.max = ns.back();
  if (ns.size() > 1) {
    double sq = 0;
    for (double d : ns) sq += (d - s.mean) * (d - s.mean);
    s.stddev = std::sqrt(sq / static_cast<double>(ns.size() - 1));
  }
  return s;
}

GpuBusy gpu_busy(const Trace& t) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
  for (const TraceKernel& k : t.kernels) spans.emplace_back(k.start, k.end);
  for (const TraceCopy& c : t.copies) spans.emplace_back(c.start, c.end);
  GpuBusy b;
  if (spans.empty()) return b;
  std::sort(spans.begin(), spans.end());
  std::uint64_t cur_start = spans[0].first, cur_end = spans[0].second;
  const std::uint64_t first = cur_start;
  for (std::size_t i = 1; i < spans.size(); ++i) {
    if (spans[i].first > cur_end) {
      b.busy_ns += cur_end - cur_start;
      const std::uint64_t gap = spans[i].first - cur_end;
      ++b.gaps;
      b.idle_ns += gap;
      b.longest_gap_ns = std::max(b.longest_gap_ns, gap);
      cur_start = spans[i].first;
    }
    cur_end = std::max(cur_end, spans[i].second);
  }
  b.busy_ns += cur_end - cur_start;
  b.span_ns = cur_end - first;
  return b;
}

KernelNames::KernelNames(const Trace& t, const CategoryRules& rules) {
  std::unordered_map<std::string, std::pair<std::string, std::string>> seen;  // raw -> (demangled, category)
  names_.reserve(t.kernels.size());
  categories_.reserve(t.kernels.size());
  for (const TraceKernel& k : t.kernels) {
    auto it = seen.find(k.name);
    if (it == seen.end()) {
      std::string name = demangle(k.name);
      std::string category = rules.classify(name);
      it = seen.emplace(k.name, std::make_pair(std::move(name), std::move(category))).first;
    }
    names_.push_back(it->second.first);
    categories_.push_back(it->second.second);
  }
}

std::vector<GemmUse> gemm_uses(const Trace& t) {
  std::vector<GemmUse> uses;
  std::map<std::string, std::size_t> index;
  std::vector<std::set<std::string>> apis;
  std::vector<std::size_t> use_of_call(t.gemms_called.size());
  for (std::size_t i = 0; i < t.gemms_called.size(); ++i) {
    const GemmCallProblem p = t.gemms_called[i].problem();
    const std::string label = p.tunable ? p.problem.key() : p.shape;
    auto it = index.find(label + "\n" + p.reason);
    if (it == index.end()) {
      it = index.emplace(label + "\n" + p.reason, uses.size()).first;
      GemmUse u;
      u.label = label;
      u.tunable = p.tunable;
      u.problem = p.problem;
      u.reason = p.reason;
      uses.push_back(u);
      apis.emplace_back();
    }
    uses[it->second].calls += t.gemms_called[i].calls;
    apis[it->second].insert(t.gemms_called[i].api());
    use_of_call[i] = it->second;
  }
  for (std::size_t u = 0; u < uses.size(); ++u)
    for (const std::string& api : apis[u]) uses[u].apis += (uses[u].apis.empty() ? "" : ",") + api;
  for (const TraceKernel& k : t.kernels) {
    if (!k.gemm) continue;
    GemmUse& u = uses[use_of_call[*k.gemm]];
    ++u.kernels;
    u.gpu_ns += static_cast<double>(k.duration());
  }
  std::sort(uses.begin(), uses.end(), [](const GemmUse& a, const GemmUse& b) {
    return a.gpu_ns != b.gpu_ns ? a.gpu_ns > b.gpu_ns : a.label < b.label;
  });
  return uses;
}

std::optional<double> GemmCoverage::fraction() const {
  if (gemm_ns <= 0) return std::nullopt;
  return recorded_ns / gemm_ns;
}

std::optional<double> GemmCoverage::tunable_fraction() const {
  if (gemm_ns <= 0) return std::nullopt;
  return tunable_ns / gemm_ns;
}

GemmCoverage gemm_coverage(const Trace& t, const KernelNames& names) {
  std::vector<bool> tunable(t.gemms_called.size());
  for (std::size_t i = 0; i < t.gemms_called.size(); ++i) tunable[i] = t.gemms_called[i].problem().tunable;
  GemmCoverage c;
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    if (names.category(i) != kGemmCategory) continue;
    const TraceKernel& k = t.kernels[i];
    const double ns = static_cast<double>(k.duration());
    c.gemm_ns += ns;
    if (!k.gemm) continue;
    c.recorded_ns += ns;
    if (tunable[*k.gemm]) c.tunable_ns += ns;
  }
  return c;
}

std::vector<long> kernel_ranges(const Trace& t) {
  std::map<int, std::vector<std::size_t>> top_by_pid;  // top-level ranges of each process, by start
  for (std::size_t i = 0; i < t.ranges.size(); ++i)
    if (t.ranges[i].depth == 0) top_by_pid[t.ranges[i].pid].push_back(i);
  for (auto& [pid, ranges] : top_by_pid)
    std::sort(ranges.begin(), ranges.end(), [&](std::size_t a, std::size_t b) { return t.ranges[a].start < t.ranges[b].start; });
  constexpr std::size_t kLookBack = 64;  // top-level ranges of other threads that may still be open
  std::vector<long> out(t.kernels.size(), -1);
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    const TraceKernel& k = t.kernels[i];
    if (!k.launch_tid) continue;
    const auto pid = top_by_pid.find(k.pid);
    if (pid == top_by_pid.end()) continue;
    const std::vector<std::size_t>& ranges = pid->second;
    auto it = std::upper_bound(ranges.begin(), ranges.end(), k.launch_ns,
                               [&](std::uint64_t ns, std::size_t r) { return ns < t.ranges[r].start; });
    long any_thread = -1;
    for (std::size_t n = 0; it != ranges.begin() && n < kLookBack; ++n) {
      --it;
      const TraceRange& r = t.ranges[*it];
      if (k.launch_ns > r.end) continue;
      if (r.tid == *k.launch_tid) {
        any_thread = static_cast<long>(*it);
        break;
      }
      if (any_thread < 0) any_thread = static_cast<long>(*it);
    }
    out[i] = any_thread;
  }
  return out;
}

std::string format_duration_ns(double ns) {
  char text[64];
  if (ns >= kMs) std::snprintf(text, sizeof(text), "%.3f ms", ns / kMs);
  else std::snprintf(text, sizeof(text), "%.1f us", ns / kUs);
  return text;
}

Table summary_table(const Trace& t, const KernelNames& names) {
  Table tab{"summary", "Summary", {"Metric", "Value"}, {}, {}};
  const auto row = [&](const std::string& metric, TableCell value) { tab.rows.push_back({metric, std::move(value)}); };
  const double wall = t.wall_ms * kMs;
  const GpuBusy b = gpu_busy(t);
  const double kernel_ns = kernel_total_ns(t);
  double memcpy_ns = 0, memset_ns = 0, gemm_ns = 0;
  std::uint64_t memcpys = 0, memsets = 0, bytes = 0;
  for (const TraceCopy& c : t.copies) {
    (c.kind == CopyKind::Memcpy ? memcpy_ns : memset_ns) += static_cast<double>(c.duration());
    ++(c.kind == CopyKind::Memcpy ? memcpys : memsets);
    if (c.kind == CopyKind::Memcpy) bytes += c.bytes;
  }
  for (std::size_t i = 0; i < t.kernels.size(); ++i)
    if (names.category(i) == kGemmCategory) gemm_ns += static_cast<double>(t.kernels[i].duration());
  row("Command", command_line(t.command));
  row("Exit code", TableCell::count(static_cast<std::uint64_t>(t.exit_code < 0 ? 0 : t.exit_code)));
  row("Wall time (ms)", ms(wall));
  row("GPU busy (ms)", ms(static_cast<double>(b.busy_ns)));
  row("GPU busy (% of wall)", pct(static_cast<double>(b.busy_ns), wall));
  row("Kernel time (ms)", ms(kernel_ns));
  row("Kernel time (% of wall)", pct(kernel_ns, wall));
  row("GEMM kernel time (ms)", ms(gemm_ns));
  row("GEMM (% of kernel time)", pct(gemm_ns, kernel_ns));
  row("Kernel launches", TableCell::count(t.kernels.size()));
  row("Memcpy time (ms)", ms(memcpy_ns));
  row("Memcpys", TableCell::count(memcpys));
  row("Memcpy bytes", TableCell::count(bytes));
  row("Memset time (ms)", ms(memset_ns));
  row("Memsets", TableCell::count(memsets));
  row("GPU active span (ms)", ms(static_cast<double>(b.span_ns)));
  row("Idle gaps in span", TableCell::count(b.gaps));
  row("Idle time in span (ms)", ms(static_cast<double>(b.idle_ns)));
  row("Longest idle gap (us)", us(static_cast<double>(b.longest_gap_ns)));
  row("NVTX ranges", TableCell::count(t.ranges.size()));
  row("Processes traced", TableCell::count(t.processes.size()));
  std::uint64_t dropped = 0;
  for (const TraceProcess& p : t.processes) {
    dropped += p.dropped;
    if (!p.complete) tab.notes.push_back("process " + std::to_string(p.pid) + " did not exit normally: its last records may be missing");
    for (const std::string& e : p.errors) tab.notes.push_back("process " + std::to_string(p.pid) + ": " + e);
  }
  row("Records dropped by CUPTI", TableCell::count(dropped));
  if (t.gemms) {
    const std::optional<double> coverage = gemm_coverage(t, names).fraction();
    row("GEMM coverage (%)", coverage ? TableCell::num(100.0 * *coverage, 1) : TableCell("-"));
  }
  if (!t.gpu_note.empty()) tab.notes.push_back(t.gpu_note);
  tab.notes.push_back("GPU busy: kernels, memcpys and memsets on any device, overlaps counted once.");
  return tab;
}

Table kernel_table(const Trace& t, const KernelNames& names) {
  Table tab{"kernels",
            "CUDA GPU kernel summary (cuda_gpu_kern_sum)",
            {"Time (%)", "Total (us)", "Instances", "Avg (us)", "Med (us)", "Min (us)", "Max (us)", "StdDev (us)",
             "Category", "Name"},
            {},
            {}};
  const double total = kernel_total_ns(t);
  for (const NamedDurations& g : group_by_name(t, names, all_kernels(t))) {
    const DurationStats s = duration_stats(g.ns);
    tab.rows.push_back({pct(s.total, total), us(s.total), TableCell::count(s.count), us(s.mean), us(s.median),
                        us(s.min), us(s.max), us(s.stddev), g.category, g.name});
  }
  return tab;
}

Table category_table(const Trace& t, const KernelNames& names) {
  Table tab{"categories",
            "Kernel time by category",
            {"Time (%)", "Total (us)", "Instances", "Kernels", "Avg (us)", "Category"},
            {},
            {"Categories come from the rules in " + CategoryRules::default_path() + " (and --categories)."}};
  struct Acc {
    double ns = 0;
    std::uint64_t count = 0;
    std::map<std::string, bool> kernels;
  };
  std::map<std::string, Acc> by;
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    Acc& a = by[names.category(i)];
    a.ns += static_cast<double>(t.kernels[i].duration());
    ++a.count;
    a.kernels[names.name(i)] = true;
  }
  std::vector<std::pair<std::string, Acc>> sorted(by.begin(), by.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  const double total = kernel_total_ns(t);
  for (const auto& [category, a] : sorted)
    tab.rows.push_back({pct(a.ns, total), us(a.ns), TableCell::count(a.count), TableCell::count(a.kernels.size()),
                        us(a.ns / static_cast<double>(a.count)), category});
  return tab;
}

Table nvtx_table(const Trace& t) {
  Table tab{"nvtx",
            "NVTX range summary (nvtx_sum)",
            {"Time (%)", "Total (us)", "Instances", "Avg (us)", "Med (us)", "Min (us)", "Max (us)", "StdDev (us)",
             "Depth", "Range"},
            {},
            {"Range times are host (CPU) times between push and pop; Time (%) is a share of all ranges' time."}};
  std::map<std::string, std::pair<int, std::vector<double>>> by;  // label -> (smallest depth, durations)
  double total = 0;
  for (const TraceRange& r : t.ranges) {
    auto& entry = by.try_emplace(range_label(r), r.depth, std::vector<double>{}).first->second;
    entry.first = std::min(entry.first, r.depth);
    entry.second.push_back(static_cast<double>(r.duration()));
    total += static_cast<double>(r.duration());
  }
  std::vector<std::pair<std::string, DurationStats>> rows;
  std::map<std::string, int> depth;
  for (const auto& [label, e] : by) {
    rows.emplace_back(label, duration_stats(e.second));
    depth[label] = e.first;
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.total > b.second.total; });
  for (const auto& [label, s] : rows)
    tab.rows.push_back({pct(s.total, total), us(s.total), TableCell::count(s.count), us(s.mean), us(s.median),
                        us(s.min), us(s.max), us(s.stddev), TableCell::count(static_cast<std::uint64_t>(depth[label])),
                        label});
  return tab;
}

namespace {

// Kernels grouped by the top-level range that launched them (kNoRange, kNoLaunch for the rest), by range label.
std::map<std::string, std::vector<std::size_t>> kernels_by_range(const Trace& t) {
  const std::vector<long> range_of = kernel_ranges(t);
  std::map<std::string, std::vector<std::size_t>> by;
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    if (range_of[i] >= 0) by[range_label(t.ranges[static_cast<std::size_t>(range_of[i])])].push_back(i);
    else by[t.kernels[i].launch_tid ? kNoRange : kNoLaunch].push_back(i);
  }
  return by;
}

}  // namespace

Table range_table(const Trace& t, const KernelNames& names) {
  Table tab{"ranges",
            "GPU time by top-level NVTX range",
            {"Kernel time (%)", "Kernel time (us)", "Kernels", "GEMM (%)", "Instances", "Range time (us)", "Range"},
            {},
            {"A kernel counts in the top-level range that was open on its process when it was launched."}};
  std::map<std::string, std::pair<std::uint64_t, double>> range_time;  // label -> (instances, host time)
  for (const TraceRange& r : t.ranges)
    if (r.depth == 0) {
      auto& e = range_time[range_label(r)];
      ++e.first;
      e.second += static_cast<double>(r.duration());
    }
  const double total = kernel_total_ns(t);
  std::vector<std::pair<double, std::vector<TableCell>>> rows;
  for (const auto& [label, kernels] : kernels_by_range(t)) {
    double ns = 0, gemm = 0;
    for (std::size_t i : kernels) {
      ns += static_cast<double>(t.kernels[i].duration());
      if (names.category(i) == kGemmCategory) gemm += static_cast<double>(t.kernels[i].duration());
    }
    const auto rt = range_time.find(label);
    rows.push_back({ns,
                    {pct(ns, total), us(ns), TableCell::count(kernels.size()), pct(gemm, ns),
                     rt == range_time.end() ? TableCell("-") : TableCell::count(rt->second.first),
                     rt == range_time.end() ? TableCell("-") : us(rt->second.second), label}});
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& r : rows) tab.rows.push_back(std::move(r.second));
  return tab;
}

Table range_kernel_table(const Trace& t, const KernelNames& names) {
  Table tab{"range_kernels",
            "Kernels per top-level NVTX range",
            {"Range", "Time (%)", "Total (us)", "Instances", "Avg (us)", "Category", "Name"},
            {},
            {"Time (%) is a share of the kernel time launched inside that range."}};
  // Ranges in order of their kernel time, as in the ranges table.
  std::vector<std::pair<double, std::pair<std::string, std::vector<std::size_t>>>> ranges;
  for (auto& [label, kernels] : kernels_by_range(t)) {
    double ns = 0;
    for (std::size_t i : kernels) ns += static_cast<double>(t.kernels[i].duration());
    ranges.push_back({ns, {label, kernels}});
  }
  std::stable_sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [range_ns, range] : ranges) {
    const auto& [label, kernels] = range;
    for (const NamedDurations& g : group_by_name(t, names, kernels)) {
      const DurationStats s = duration_stats(g.ns);
      tab.rows.push_back({label, pct(s.total, range_ns), us(s.total), TableCell::count(s.count), us(s.mean),
                          g.category, g.name});
    }
  }
  return tab;
}

Table gemm_table(const Trace& t, const KernelNames& names) {
  Table tab{"gemms",
            "GEMM problems run through cuBLAS and cuBLASLt",
            {"Time (%)", "GPU time (us)", "Calls", "Avg/call (us)", "Kernels", "API", "Tunable", "Problem"},
            {},
            {}};
  const double total = kernel_total_ns(t);
  double attributed = 0;
  for (const GemmUse& u : gemm_uses(t)) {
    attributed += u.gpu_ns;
    tab.rows.push_back({pct(u.gpu_ns, total), us(u.gpu_ns), TableCell::count(u.calls),
                        us(u.calls ? u.gpu_ns / static_cast<double>(u.calls) : 0.0), TableCell::count(u.kernels),
                        u.apis, u.tunable ? "yes" : "no: " + u.reason, u.label});
  }
  const GemmCoverage c = gemm_coverage(t, names);
  tab.notes.push_back("Time (%) is a share of all kernel time; the calls above account for " +
                      format_duration_ns(attributed) + " of " + format_duration_ns(total) + ".");
  if (c.fraction()) {
    char text[256];
    std::snprintf(text, sizeof(text),
                  "GEMM coverage: %.1f%% of GEMM kernel time (%s of %s) ran for a call above; %.1f%% for a "
                  "tunable one.",
                  100.0 * *c.fraction(), format_duration_ns(c.recorded_ns).c_str(),
                  format_duration_ns(c.gemm_ns).c_str(), 100.0 * *c.tunable_fraction());
    tab.notes.push_back(text);
  } else {
    tab.notes.push_back("GEMM coverage: no GEMM kernel ran.");
  }
  tab.notes.push_back("Tunable problems are gemmtune problem keys: `gemmtune trace --gemms --db FILE` records them as "
                      "misses for `gemmtune sweep --from-misses`.");
  return tab;
}

std::vector<std::string> trace_table_ids() {
  return {"summary", "kernels", "categories", "nvtx", "ranges", "range_kernels", "gemms"};
}

std::vector<Table> trace_tables(const Trace& t, const CategoryRules& rules, const std::string& only) {
  const std::vector<std::string> ids = trace_table_ids();
  if (!only.empty() && std::find(ids.begin(), ids.end(), only) == ids.end()) {
    std::string list;
    for (const std::string& id : ids) list += (list.empty() ? "" : ", ") + id;
    throw InputError("unknown table '" + only + "' (" + list + ")");
  }
  const KernelNames names(t, rules);
  std::vector<Table> out;
  const auto want = [&](const char* id) { return only.empty() || only == id; };
  if (want("summary")) out.push_back(summary_table(t, names));
  if (want("kernels")) out.push_back(kernel_table(t, names));
  if (want("categories")) out.push_back(category_table(t, names));
  const bool ranges = !t.ranges.empty();
  if (want("nvtx") && (ranges || !only.empty())) out.push_back(nvtx_table(t));
  if (want("ranges") && (ranges || !only.empty())) out.push_back(range_table(t, names));
  if (want("range_kernels") && (ranges || !only.empty())) out.push_back(range_kernel_table(t, names));
  if (want("gemms") && (t.gemms || !only.empty())) out.push_back(gemm_table(t, names));
  return out;
}

}  // namespace gemmtune
