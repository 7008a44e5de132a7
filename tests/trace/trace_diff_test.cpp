#include "trace/trace_diff.hpp"

#include <gtest/gtest.h>

#include "trace/trace_fixture.hpp"

namespace gemmtune {
namespace {

// The fixture after a change that halves the cuBLASLt GEMMs' kernel time and removes the transpose kernel.
Trace tuned(Trace t) {
  std::vector<TraceKernel> kept;
  for (TraceKernel k : t.kernels) {
    if (k.name == "_Z14k_transpose_MNPKfPfii") continue;
    if (k.gemm) k.end = k.start + k.duration() / 2;
    kept.push_back(k);
  }
  t.kernels = kept;
  return t;
}

const std::vector<TableCell>* row_named(const Table& t, const std::string& name) {
  for (const auto& r : t.rows)
    if (r.back().text == name) return &r;
  return nullptr;
}

TEST(TraceDiff, CategoriesAreSortedByTimeMovedWithSharesBeforeAndAfter) {
  const Trace before = test::mlp_step_trace();
  const std::vector<Table> tables = trace_diff_tables(before, tuned(before), test::default_category_rules());
  ASSERT_GE(tables.size(), 3u);
  const Table& c = tables[1];
  EXPECT_EQ(c.id, "diff_categories");
  EXPECT_EQ(c.rows.front().back().text, "GEMM");  // moved most: 26 us -> 13 us
  const auto& gemm = c.rows.front();
  EXPECT_DOUBLE_EQ(*gemm[0].number, 26);
  EXPECT_NEAR(*gemm[1].number, 100.0 * 26 / 36, 1e-9);
  EXPECT_DOUBLE_EQ(*gemm[2].number, 13);
  EXPECT_NEAR(*gemm[3].number, 100.0 * 13 / 22, 1e-9);  // after: 13 of 22 us of kernel time
  EXPECT_DOUBLE_EQ(*gemm[4].number, -13);
  const auto* transpose = row_named(c, "transpose");
  ASSERT_NE(transpose, nullptr);
  EXPECT_DOUBLE_EQ(*(*transpose)[2].number, 0);
  EXPECT_EQ(*(*transpose)[7].number, 0);  // after: no instance
  // Unchanged categories keep their time and move last.
  EXPECT_DOUBLE_EQ(*c.rows.back()[4].number, 0);
}

TEST(TraceDiff, KernelsAndGemmProblemsMoveToo) {
  const Trace before = test::mlp_step_trace();
  const std::vector<Table> tables = trace_diff_tables(before, tuned(before), test::default_category_rules());
  const Table& k = tables[2];
  EXPECT_EQ(k.id, "diff_kernels");
  EXPECT_EQ(k.rows.front().back().text, "sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32_cublas");
  EXPECT_DOUBLE_EQ(*k.rows.front()[4].number, -9);
  ASSERT_EQ(tables.size(), 4u);
  const Table& g = tables[3];
  EXPECT_EQ(g.id, "diff_gemms");
  const auto* fwd = row_named(g, "fwd:64x256x128:nt:row:bias:tf32");
  ASSERT_NE(fwd, nullptr);
  EXPECT_DOUBLE_EQ(*(*fwd)[4].number, -5);
  const Table& totals = tables[0];
  const auto& launches = totals.rows.at(3);
  EXPECT_EQ(launches[0].text, "Kernel launches");
  EXPECT_DOUBLE_EQ(*launches[3].number, -1);
}

TEST(TraceDiff, GemmCoverageIsComparedBeforeAndAfter) {
  const Trace before = test::torch_step_trace();
  Trace after = before;
  for (TraceKernel& k : after.kernels) k.gemm.reset();  // traced without the shim's attribution
  const std::vector<Table> tables = trace_diff_tables(before, after, test::default_category_rules());
  const std::vector<TableCell>* coverage = nullptr;
  for (const auto& r : tables[0].rows)
    if (r.front().text == "GEMM coverage (%)") coverage = &r;
  ASSERT_NE(coverage, nullptr);
  EXPECT_DOUBLE_EQ(*(*coverage)[1].number, 90);
  EXPECT_DOUBLE_EQ(*(*coverage)[2].number, 0);
}

}  // namespace
}  // namespace gemmtune
