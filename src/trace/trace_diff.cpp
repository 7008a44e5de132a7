#include "trace/trace_diff.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "trace/trace_tables.hpp"

namespace gemmtune {
namespace {

constexpr double kUs = 1e3;

struct Side {
  double ns = 0;
  std::uint64_t count = 0;
};

struct Moved {
  std::string key;
  std::string category;  // kernels only
  Side before, after;
};

// One row per key in either trace: time and share before and after, what moved, largest move first.
Table moved_table(std::string id, std::string title, const std::string& key_column, bool with_category,
                  std::vector<Moved> rows, double before_total, double after_total) {
  Table tab{std::move(id),
            std::move(title),
            {"Before (us)", "Before (%)", "After (us)", "After (%)", "Moved (us)", "Share moved (pts)", "Before n",
             "After n"},
            {},
            {}};
  if (with_category) tab.columns.push_back("Category");
  tab.columns.push_back(key_column);
  std::sort(rows.begin(), rows.end(), [](const Moved& a, const Moved& b) {
    const double da = std::fabs(a.after.ns - a.before.ns), db = std::fabs(b.after.ns - b.before.ns);
    return da != db ? da > db : a.key < b.key;
  });
  const auto share = [](double ns, double total) { return total > 0 ? 100.0 * ns / total : 0.0; };
  for (const Moved& m : rows) {
    const double bs = share(m.before.ns, before_total), as = share(m.after.ns, after_total);
    std::vector<TableCell> r{TableCell::num(m.before.ns / kUs, 3),
                             TableCell::num(bs, 1),
                             TableCell::num(m.after.ns / kUs, 3),
                             TableCell::num(as, 1),
                             TableCell::num((m.after.ns - m.before.ns) / kUs, 3),
                             TableCell::num(as - bs, 1),
                             TableCell::count(m.before.count),
                             TableCell::count(m.after.count)};
    if (with_category) r.emplace_back(m.category);
    r.emplace_back(m.key);
    tab.rows.push_back(std::move(r));
  }
  return tab;
}

double kernel_ns(const Trace& t) {
  double ns = 0;
  for (const TraceKernel& k : t.kernels) ns += static_cast<double>(k.duration());
  return ns;
}

}  // namespace

std::vector<Table> trace_diff_tables(const Trace& before, const Trace& after, const CategoryRules& rules) {
  const KernelNames bn(before, rules), an(after, rules);
  const double bk = kernel_ns(before), ak = kernel_ns(after);

  std::map<std::string, Moved> categories, kernels;
  const auto add = [&](const Trace& t, const KernelNames& names, bool is_after) {
    for (std::size_t i = 0; i < t.kernels.size(); ++i) {
      const double ns = static_cast<double>(t.kernels[i].duration());
      for (auto* m : {&categories[names.category(i)], &kernels[names.name(i)]}) {
        Side& s = is_after ? m->after : m->before;
        s.ns += ns;
        ++s.count;
      }
      kernels[names.name(i)].category = names.category(i);
    }
  };
  add(before, bn, false);
  add(after, an, true);
  std::vector<Moved> category_rows, kernel_rows;
  for (auto& [key, m] : categories) {
    m.key = key;
    category_rows.push_back(m);
  }
  for (auto& [key, m] : kernels) {
    m.key = key;
    kernel_rows.push_back(m);
  }

  Table totals{"diff_summary", "Before and after", {"Metric", "Before", "After", "Change"}, {}, {}};
  const auto total_row = [&](const std::string& metric, double b, double a, int decimals) {
    totals.rows.push_back({metric, TableCell::num(b, decimals), TableCell::num(a, decimals),
                           TableCell::num(a - b, decimals)});
  };
  const GpuBusy bb = gpu_busy(before), ab = gpu_busy(after);
  total_row("Wall time (ms)", before.wall_ms, after.wall_ms, 3);
  total_row("GPU busy (ms)", static_cast<double>(bb.busy_ns) / 1e6, static_cast<double>(ab.busy_ns) / 1e6, 3);
  total_row("Kernel time (ms)", bk / 1e6, ak / 1e6, 3);
  total_row("Kernel launches", static_cast<double>(before.kernels.size()), static_cast<double>(after.kernels.size()), 0);
  const Moved& gemm = categories[kGemmCategory];
  total_row("GEMM kernel time (ms)", gemm.before.ns / 1e6, gemm.after.ns / 1e6, 3);
  total_row("GEMM (% of kernel time)", bk > 0 ? 100 * gemm.before.ns / bk : 0, ak > 0 ? 100 * gemm.after.ns / ak : 0, 1);
  if (before.gemms || after.gemms)
    total_row("GEMM coverage (%)", 100 * gemm_coverage(before, bn).fraction().value_or(0),
              100 * gemm_coverage(after, an).fraction().value_or(0), 1);

  std::vector<Table> out{totals,
                         moved_table("diff_categories", "Kernel time by category, before and after", "Category", false,
                                     category_rows, bk, ak),
                         moved_table("diff_kernels", "Kernels, before and after", "Name", true, kernel_rows, bk, ak)};
  if (before.gemms || after.gemms) {
    std::map<std::string, Moved> gemms;
    for (const GemmUse& u : gemm_uses(before)) {
      gemms[u.label].before.ns += u.gpu_ns;
      gemms[u.label].before.count += u.calls;
    }
    for (const GemmUse& u : gemm_uses(after)) {
      gemms[u.label].after.ns += u.gpu_ns;
      gemms[u.label].after.count += u.calls;
    }
    std::vector<Moved> gemm_rows;
    for (auto& [key, m] : gemms) {
      m.key = key;
      gemm_rows.push_back(m);
    }
    Table t = moved_table("diff_gemms", "GEMM problems, before and after", "Problem", false, gemm_rows, bk, ak);
    t.notes.push_back("Before n / After n: cuBLAS and cuBLASLt calls.");
    out.push_back(std::move(t));
  }
  out[1].notes.push_back("Shares are of each trace's own kernel time; Moved is after minus before.");
  return out;
}

}  // namespace gemmtune
