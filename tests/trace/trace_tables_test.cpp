#include "trace/trace_tables.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "trace/trace_fixture.hpp"

namespace gemmtune {
namespace {

// The row whose last cell (the name column) is `name`.
const std::vector<TableCell>* row_named(const Table& t, const std::string& name) {
  for (const auto& r : t.rows)
    if (r.back().text == name) return &r;
  return nullptr;
}

double number(const std::vector<TableCell>& row, std::size_t column) {
  EXPECT_TRUE(row.at(column).number.has_value()) << row.at(column).text;
  return row.at(column).number.value_or(-1);
}

std::size_t column(const Table& t, const std::string& name) {
  for (std::size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i] == name) return i;
  ADD_FAILURE() << "no column " << name << " in " << t.id;
  return 0;
}

double metric(const Table& summary, const std::string& name) {
  const auto* r = [&]() -> const std::vector<TableCell>* {
    for (const auto& row : summary.rows)
      if (row.front().text == name) return &row;
    return nullptr;
  }();
  if (!r) {
    ADD_FAILURE() << "no metric " << name;
    return -1;
  }
  return number(*r, 1);
}

TEST(DurationStats, MedianMeanAndSampleStddev) {
  const DurationStats s = duration_stats({4, 1, 3, 2});
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.total, 10);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_NEAR(s.stddev, 1.2909944, 1e-6);
  EXPECT_DOUBLE_EQ(duration_stats({7}).stddev, 0);
}

TEST(GpuBusy, OverlapsCountOnceAndGapsAreMeasured) {
  const GpuBusy b = gpu_busy(test::mlp_step_trace());
  EXPECT_EQ(b.busy_ns, 47000u);
  EXPECT_EQ(b.span_ns, 71000u);
  EXPECT_EQ(b.gaps, 4u);
  EXPECT_EQ(b.idle_ns, 24000u);
  EXPECT_EQ(b.longest_gap_ns, 8000u);
}

TEST(TraceTables, SummaryHasTheSeedsNumbers) {
  const Trace t = test::mlp_step_trace();
  const Table s = summary_table(t, KernelNames(t, test::default_category_rules()));
  EXPECT_DOUBLE_EQ(metric(s, "Wall time (ms)"), 0.5);
  EXPECT_DOUBLE_EQ(metric(s, "GPU busy (ms)"), 0.047);
  EXPECT_NEAR(metric(s, "GPU busy (% of wall)"), 9.4, 1e-9);
  EXPECT_DOUBLE_EQ(metric(s, "Kernel time (ms)"), 0.036);
  EXPECT_DOUBLE_EQ(metric(s, "GEMM kernel time (ms)"), 0.026);
  EXPECT_NEAR(metric(s, "GEMM (% of kernel time)"), 100.0 * 26 / 36, 1e-9);
  EXPECT_EQ(metric(s, "Kernel launches"), 7);
  EXPECT_DOUBLE_EQ(metric(s, "Memcpy time (ms)"), 0.010);
  EXPECT_DOUBLE_EQ(metric(s, "Memset time (ms)"), 0.002);
  EXPECT_EQ(metric(s, "Idle gaps in span"), 4);
  EXPECT_DOUBLE_EQ(metric(s, "Longest idle gap (us)"), 8);
}

TEST(TraceTables, KernelSummaryIsCudaGpuKernSum) {
  const Trace t = test::mlp_step_trace();
  const Table k = kernel_table(t, KernelNames(t, test::default_category_rules()));
  EXPECT_EQ(k.columns.front(), "Time (%)");
  ASSERT_EQ(k.rows.size(), 6u);  // seven kernels, six names
  const std::string gemm = "sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32_cublas";
  EXPECT_EQ(k.rows.front().back().text, gemm);  // the largest total first
  const auto* r = row_named(k, gemm);
  ASSERT_NE(r, nullptr);
  EXPECT_NEAR(number(*r, column(k, "Time (%)")), 50.0, 1e-9);
  EXPECT_DOUBLE_EQ(number(*r, column(k, "Total (us)")), 18);
  EXPECT_EQ(number(*r, column(k, "Instances")), 2);
  EXPECT_DOUBLE_EQ(number(*r, column(k, "Avg (us)")), 9);
  EXPECT_DOUBLE_EQ(number(*r, column(k, "Med (us)")), 9);
  EXPECT_DOUBLE_EQ(number(*r, column(k, "Min (us)")), 8);
  EXPECT_DOUBLE_EQ(number(*r, column(k, "Max (us)")), 10);
  EXPECT_NEAR(number(*r, column(k, "StdDev (us)")), 1.414, 1e-3);
  EXPECT_EQ(r->at(column(k, "Category")).text, "GEMM");
  // Names are demangled.
  EXPECT_NE(row_named(k, "gelu_forward_kernel(float*, float const*, int)"), nullptr);
}

TEST(TraceTables, CategoriesAddUpToAllKernelTime) {
  const Trace t = test::mlp_step_trace();
  const Table c = category_table(t, KernelNames(t, test::default_category_rules()));
  const std::map<std::string, double> expected = {{"GEMM", 26},     {"epilogue/elementwise", 4}, {"reduction", 2},
                                                  {"optimizer", 3}, {"transpose", 1}};
  ASSERT_EQ(c.rows.size(), expected.size());
  double share = 0;
  for (const auto& [category, us] : expected) {
    const auto* r = row_named(c, category);
    ASSERT_NE(r, nullptr) << category;
    EXPECT_DOUBLE_EQ(number(*r, column(c, "Total (us)")), us) << category;
    share += number(*r, column(c, "Time (%)"));
  }
  EXPECT_NEAR(share, 100.0, 0.2);
}

TEST(TraceTables, NvtxSummaryListsEveryRangeWithItsDepth) {
  const Table n = nvtx_table(test::mlp_step_trace());
  ASSERT_EQ(n.rows.size(), 5u);
  const auto* backward = row_named(n, "backward");
  ASSERT_NE(backward, nullptr);
  EXPECT_DOUBLE_EQ(number(*backward, column(n, "Total (us)")), 150);
  EXPECT_EQ(number(*backward, column(n, "Depth")), 0);
  const auto* inner = row_named(n, "inner");
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(number(*inner, column(n, "Depth")), 1);
}

TEST(TraceTables, KernelsCountInTheTopLevelRangeThatLaunchedThem) {
  const Trace t = test::mlp_step_trace();
  const KernelNames names(t, test::default_category_rules());
  const Table r = range_table(t, names);
  const std::map<std::string, std::pair<double, double>> expected = {
      {"forward", {14, 2}},  // the cuBLASLt GEMM and gelu (launched inside the nested range too)
      {"loss", {2, 1}},
      {"backward", {16, 2}},  // launched from another thread while the main thread was in "backward"
      {"optimizer", {3, 1}},
      {"(launch not recorded)", {1, 1}}};
  ASSERT_EQ(r.rows.size(), expected.size());
  for (const auto& [label, e] : expected) {
    const auto* row = row_named(r, label);
    ASSERT_NE(row, nullptr) << label;
    EXPECT_DOUBLE_EQ(number(*row, column(r, "Kernel time (us)")), e.first) << label;
    EXPECT_EQ(number(*row, column(r, "Kernels")), e.second) << label;
  }
  const auto* forward = row_named(r, "forward");
  EXPECT_NEAR(number(*forward, column(r, "GEMM (%)")), 100.0 * 10 / 14, 0.05);

  const Table k = range_kernel_table(t, names);
  int backward_rows = 0;
  for (const auto& row : k.rows) backward_rows += row.front().text == "backward";
  EXPECT_EQ(backward_rows, 2);
}

TEST(TraceTables, GemmProblemsWithCountAndShare) {
  const Trace t = test::mlp_step_trace();
  const std::vector<GemmUse> uses = gemm_uses(t);
  ASSERT_EQ(uses.size(), 3u);
  EXPECT_EQ(uses[0].label, "fwd:64x256x128:nt:row:bias:tf32");
  EXPECT_TRUE(uses[0].tunable);
  EXPECT_DOUBLE_EQ(uses[0].gpu_ns, 10000);
  EXPECT_EQ(uses[0].calls, 1u);
  // 8000 ns each: sorted by label on a tie.
  EXPECT_FALSE(uses[1].tunable);
  EXPECT_NE(uses[1].reason.find("bf16"), std::string::npos);
  EXPECT_EQ(uses[2].label, "fwd:256x128x64:tn:row:none:tf32");
  const Table g = gemm_table(t, KernelNames(t, test::default_category_rules()));
  const auto* r = row_named(g, "fwd:64x256x128:nt:row:bias:tf32");
  ASSERT_NE(r, nullptr);
  EXPECT_NEAR(number(*r, column(g, "Time (%)")), 100.0 * 10 / 36, 0.05);
  EXPECT_EQ(r->at(column(g, "Tunable")).text, "yes");
}

TEST(TraceTables, CublasAndCublasLtCallsOfOneProblemShareItsRow) {
  const Trace t = test::torch_step_trace();
  const std::vector<GemmUse> uses = gemm_uses(t);
  ASSERT_EQ(uses.size(), 4u);
  EXPECT_EQ(uses[0].label, "fwd:64x256x128:nt:row:bias:tf32");
  EXPECT_EQ(uses[0].apis, "cublasLtMatmul");
  // The tn product's two kernels (the GEMM and its split-k reduction) tie with the nn product at 5000 ns.
  EXPECT_EQ(uses[1].label, "fwd:256x128x64:tn:row:none:tf32");
  EXPECT_EQ(uses[1].kernels, 2u);
  EXPECT_DOUBLE_EQ(uses[1].gpu_ns, 5000);
  EXPECT_EQ(uses[2].label, "fwd:64x128x256:nn:row:none:tf32");
  EXPECT_EQ(uses[2].apis, "cublasGemmEx,cublasSgemm_v2");
  EXPECT_EQ(uses[2].calls, 2u);
  EXPECT_FALSE(uses[3].tunable);
  EXPECT_NE(uses[3].reason.find("batched (4)"), std::string::npos) << uses[3].reason;
  EXPECT_NE(uses[3].label.find("batch 4"), std::string::npos) << uses[3].label;
  EXPECT_EQ(uses[3].apis, "cublasSgemmStridedBatched");
}

TEST(TraceTables, GemmCoverageIsTheShareOfGemmKernelTimeFromRecordedCalls) {
  const Trace t = test::torch_step_trace();
  const KernelNames names(t, test::default_category_rules());
  const GemmCoverage c = gemm_coverage(t, names);
  EXPECT_DOUBLE_EQ(c.gemm_ns, 20000);
  EXPECT_DOUBLE_EQ(c.recorded_ns, 18000);
  EXPECT_DOUBLE_EQ(c.tunable_ns, 16000);
  EXPECT_DOUBLE_EQ(c.fraction().value_or(-1), 0.9);
  EXPECT_DOUBLE_EQ(c.tunable_fraction().value_or(-1), 0.8);
  EXPECT_NEAR(metric(summary_table(t, names), "GEMM coverage (%)"), 90.0, 1e-9);
  const Table g = gemm_table(t, names);
  bool noted = false;
  for (const std::string& n : g.notes) noted = noted || n.rfind("GEMM coverage: 90.0% of GEMM kernel time", 0) == 0;
  EXPECT_TRUE(noted);
  const auto* batched = g.rows.back().data();
  EXPECT_EQ(batched[column(g, "API")].text, "cublasSgemmStridedBatched");
  EXPECT_EQ(batched[column(g, "Tunable")].text.rfind("no: batched (4)", 0), 0u) << batched[column(g, "Tunable")].text;
  // Without a GEMM kernel there is no coverage to state.
  Trace none = t;
  none.kernels.clear();
  EXPECT_FALSE(gemm_coverage(none, KernelNames(none, test::default_category_rules())).fraction().has_value());
}

TEST(TraceTables, AnUnknownTableIsAnInputError) {
  const Trace t = test::mlp_step_trace();
  EXPECT_THROW(trace_tables(t, test::default_category_rules(), "kernel"), InputError);
  EXPECT_EQ(trace_tables(t, test::default_category_rules(), "kernels").size(), 1u);
  EXPECT_EQ(trace_tables(t, test::default_category_rules()).size(), trace_table_ids().size());
}

TEST(TableRendering, EveryFormatCarriesTheSameRows) {
  const Trace t = test::mlp_step_trace();
  const std::vector<Table> tables = trace_tables(t, test::default_category_rules(), "categories");
  std::ostringstream text, csv, md, json;
  render_tables(tables, TableFormat::Text, text);
  render_tables(tables, TableFormat::Csv, csv);
  render_tables(tables, TableFormat::Markdown, md);
  render_tables(tables, TableFormat::Json, json);
  EXPECT_NE(text.str().find("Kernel time by category:"), std::string::npos);
  EXPECT_EQ(csv.str().rfind("Time (%),Total (us),Instances,Kernels,Avg (us),Category\n", 0), 0u) << csv.str();
  EXPECT_NE(csv.str().find("72.2,26.000,3,2,8.667,GEMM\n"), std::string::npos) << csv.str();
  EXPECT_NE(md.str().find("| 72.2 | 26.000 | 3 | 2 | 8.667 | GEMM |"), std::string::npos) << md.str();
  const auto j = nlohmann::json::parse(json.str());
  EXPECT_EQ(j.at("schema"), "gemmtune.trace_tables");
  EXPECT_DOUBLE_EQ(j.at("tables").at("categories").at("rows").at(0).at("Total (us)").get<double>(), 26.0);
  EXPECT_THROW(parse_table_format("xml"), InputError);
}

}  // namespace
}  // namespace gemmtune
