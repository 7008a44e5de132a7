// Import of real ncu raw pages from the H100 (fixtures/README.md): ncu_raw_workload_h100.csv is the NcuCaseWorkload
// GPU test profiled with --nvtx (2 warm-up calls outside any case, 3 calls of one case, 5 of a case whose range name
// extends the first's); ncu_raw_quick_tf32_1024_h100.csv is a report that `gemmtune ncu --set quick --exec` made of
// `gemmtune run`, read back with --import --print-units base.
#include "profiler/ncu_import.hpp"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "profiler/ncu_nvtx_stack.hpp"

namespace gemmtune {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(GEMMTUNE_SOURCE_DIR) + "/tests/profiler/fixtures/" + name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const char* kFused = "lt/a43-t18-s34-k1-r0-w0-c0-cl5-i0";
const char* kUnfused = "lt/a43-t18-s34-k1-r0-w0-c0-cl5-i0+epi";

TEST(NcuRawTable, SkipsTheApplicationOutputAndReadsUnitsAndKernelRows) {
  const NcuRawTable t = NcuRawTable::parse(fixture("ncu_raw_workload_h100.csv"));
  EXPECT_EQ(t.kernel_count(), 10u);
  EXPECT_EQ(t.unit("gpu__time_duration.sum"), "ns");
  EXPECT_EQ(t.text(0, "device__attribute_display_name"), "NVIDIA H100 80GB HBM3");
}

TEST(NcuRawTable, NumbersWithThousandsSeparatorsReadBack) {
  const NcuRawTable t = NcuRawTable::parse(fixture("ncu_raw_workload_h100.csv"));
  EXPECT_DOUBLE_EQ(*t.value(0, "gpu__time_duration.sum"), 17344.0);  // printed "17,344"
  EXPECT_DOUBLE_EQ(*t.value(0, "launch__shared_mem_per_block_dynamic"), 231424.0);
  EXPECT_FALSE(t.value(0, "Kernel Name").has_value());
  EXPECT_FALSE(t.value(0, "no__such_metric").has_value());
}

TEST(NcuRawTable, ScaledUnitsConvertToBaseUnits) {
  const NcuRawTable t = NcuRawTable::parse(
      "\"ID\",\"gpu__time_duration.sum\",\"dram__bytes.sum\"\n\"\",\"usecond\",\"Mbyte\"\n\"0\",\"17.5\",\"1.25\"\n");
  EXPECT_DOUBLE_EQ(*t.base_value(0, "gpu__time_duration.sum"), 17500.0);
  EXPECT_DOUBLE_EQ(*t.base_value(0, "dram__bytes.sum"), 1.25e6);
}

TEST(NcuRawTable, OutputWithoutATableIsInputError) {
  EXPECT_THROW(NcuRawTable::parse("==ERROR== The file could not be opened.\n"), InputError);
  EXPECT_THROW(NcuRawTable::parse("\"ID\",\"a\"\n\"\",\"\"\n\"0\"\n"), InputError);  // a short row
}

TEST(NcuImport, EachKernelMapsToItsCaseAndWarmupKernelsAreCountedOutside) {
  const NcuImport imp =
      import_ncu_kernels(NcuRawTable::parse(fixture("ncu_raw_workload_h100.csv")), "none", "r.ncu-rep");
  EXPECT_EQ(imp.kernels_outside_cases, 2);
  EXPECT_EQ(imp.gpu_name, "NVIDIA H100 80GB HBM3");
  int fused = 0, unfused = 0;
  for (const NcuKernelMetrics& k : imp.kernels) {
    EXPECT_EQ(k.problem_key, "fwd:1024x1024x1024:nn:row:none:tf32");
    fused += k.candidate_id == kFused;
    unfused += k.candidate_id == kUnfused;
  }
  EXPECT_EQ(fused, 3);
  EXPECT_EQ(unfused, 5);
}

TEST(NcuImport, MetricsAreReadInMicrosecondsAndMissingOnesMarkedMinusOne) {
  const NcuImport imp =
      import_ncu_kernels(NcuRawTable::parse(fixture("ncu_raw_workload_h100.csv")), "none", "r.ncu-rep");
  ASSERT_FALSE(imp.kernels.empty());
  const NcuKernelMetrics& k = imp.kernels.front();  // ID 2, the first call of the fused case
  EXPECT_NEAR(k.duration_us, 16.224, 1e-9);
  EXPECT_EQ(k.registers_per_thread, 168);
  EXPECT_EQ(k.shared_mem_bytes, 231424);
  EXPECT_EQ(k.launch_index, 0);
  EXPECT_EQ(k.kernel_name.rfind("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x128x32", 0), 0u);
  EXPECT_EQ(k.dram_bytes, -1);  // this trimmed report has no DRAM metric
  EXPECT_EQ(k.top_stalls, "[]");
  EXPECT_EQ(k.cache_control, "none");
  EXPECT_EQ(k.report_path, "r.ncu-rep");
}

TEST(NcuImport, QuickSetReportOfGemmtuneRunFillsEveryStoredMetric) {
  const NcuImport imp =
      import_ncu_kernels(NcuRawTable::parse(fixture("ncu_raw_quick_tf32_1024_h100.csv")), "none", "q.ncu-rep");
  ASSERT_EQ(imp.kernels.size(), 3u);  // `gemmtune run --iters 3`: its three timed calls and nothing else
  EXPECT_EQ(imp.kernels_outside_cases, 0);
  const NcuKernelMetrics& k = imp.kernels.front();
  EXPECT_EQ(k.problem_key, "fwd:1024x1024x1024:nn:row:none:tf32");
  EXPECT_EQ(k.candidate_id, "lt/a43-t18-s34-k-1-r2-w0-c0-cl3-i0");
  EXPECT_NEAR(k.duration_us, 14.816, 1e-9);
  EXPECT_DOUBLE_EQ(k.sm_throughput_pct, 29.64);
  EXPECT_DOUBLE_EQ(k.memory_throughput_pct, 43.13);
  EXPECT_DOUBLE_EQ(k.dram_throughput_pct, 0.02);
  EXPECT_DOUBLE_EQ(k.achieved_occupancy_pct, 11.78);
  EXPECT_EQ(k.registers_per_thread, 168);
  EXPECT_EQ(k.shared_mem_bytes, 231424);
  EXPECT_DOUBLE_EQ(k.dram_bytes, 10752.0);  // --cache-control none: the 12 MB of operands stayed in the 50 MB L2
  EXPECT_DOUBLE_EQ(k.l2_hit_rate_pct, 102.48);
  EXPECT_NEAR(k.clock_mhz, 1808.76, 0.01);
  const nlohmann::json stalls = nlohmann::json::parse(k.top_stalls);
  ASSERT_EQ(stalls.size(), 3u);
  EXPECT_EQ(stalls[0]["reason"], "long_scoreboard");
  EXPECT_NEAR(stalls[0]["pct"].get<double>(), 100 * 2.51 / 5.87, 1e-6);
  EXPECT_EQ(stalls[1]["reason"], "wait");
  EXPECT_EQ(stalls[2]["reason"], "short_scoreboard");
  for (const NcuKernelMetrics& each : imp.kernels) EXPECT_EQ(each.launch_index, 0);
}

TEST(NcuImport, LaunchIndexRestartsWithEachCallOfSeveralKernels) {
  std::string csv = "\"ID\",\"Kernel Name\",\"" + std::string(kNcuPushPopColumn) + "\"\n";
  const std::string range = "fwd:8x8x8:nn:row:none:tf32|lt|a1-t0-s0-k2-r1-w0-c0-cl0-i0";
  const std::string cell = "1  \"\"gemmtune:" + range + ":none:none:none:none:ASCII:" + range + "\"\" ";
  int id = 0;
  for (int call = 0; call < 3; ++call)
    for (const char* kernel : {"gemm_splitk", "splitk_reduce"})
      csv += "\"" + std::to_string(id++) + "\",\"" + kernel + "\",\"" + cell + "\"\n";
  const NcuImport imp = import_ncu_kernels(NcuRawTable::parse(csv), "all", "r");
  ASSERT_EQ(imp.kernels.size(), 6u);
  for (std::size_t i = 0; i < imp.kernels.size(); ++i) EXPECT_EQ(imp.kernels[i].launch_index, static_cast<int>(i % 2));
}

TEST(NcuImport, TopStallsAreTheLargestReasonsAsSharesOfAllStalls) {
  const std::string header = "\"ID\",\"" + std::string(kNcuPushPopColumn) + "\",\"" + ncu_stall_column("long_scoreboard") +
                             "\",\"" + ncu_stall_column("barrier") + "\",\"" + ncu_stall_column("selected") + "\",\"" +
                             ncu_stall_column("math_pipe_throttle") + "\",\"" + ncu_stall_column("wait") + "\"\n";
  const std::string range = "fwd:8x8x8:nn:row:none:tf32|own|v1";
  const std::string row = "\"0\",\"1  \"\"gemmtune:" + range + ":none:none:none:none:ASCII:" + range +
                          "\"\" \",\"6\",\"1\",\"50\",\"2\",\"1\"\n";
  const NcuImport imp = import_ncu_kernels(NcuRawTable::parse(header + row), "none", "r");
  ASSERT_EQ(imp.kernels.size(), 1u);
  const nlohmann::json stalls = nlohmann::json::parse(imp.kernels[0].top_stalls);
  ASSERT_EQ(stalls.size(), 3u);  // "selected" issues, it does not stall; the smallest reason falls off
  EXPECT_EQ(stalls[0]["reason"], "long_scoreboard");
  EXPECT_DOUBLE_EQ(stalls[0]["pct"].get<double>(), 60.0);
  EXPECT_EQ(stalls[1]["reason"], "math_pipe_throttle");
  EXPECT_DOUBLE_EQ(stalls[1]["pct"].get<double>(), 20.0);
}

// A report damaged or edited by hand is refused, naming the row and the metric, before a value is converted
// (a register count of 1e300 cast to int) or stored.
TEST(NcuImport, RefusesImpossibleMetricValuesNamingTheRowAndColumn) {
  const std::string good = fixture("ncu_raw_quick_tf32_1024_h100.csv");
  const NcuRawTable table = NcuRawTable::parse(good);
  ASSERT_GT(table.kernel_count(), 0u);
  const struct {
    const char* column;
    const char* value;
  } bad[] = {{"launch__registers_per_thread", "1e300"},
             {"launch__registers_per_thread", "-1"},
             {"gpu__time_duration.sum", "inf"},
             {"gpu__time_duration.sum", "nan"},
             {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "1e9"},
             {"gpc__cycles_elapsed.avg.per_second", "500000"},
             {"launch__shared_mem_per_block_dynamic", "-5"}};
  const std::vector<std::string> columns = table.column_names();
  for (const auto& b : bad) {
    // Rewrite the cell of kernel row 0 in that column: the row's line is the third of the table.
    std::istringstream lines(good);
    std::string text, line;
    int line_no = 0;
    while (std::getline(lines, line)) {
      if (line_no++ == 2) {
        std::size_t col = 0;
        while (col < columns.size() && columns[col] != b.column) ++col;
        ASSERT_LT(col, columns.size()) << b.column;
        // Cells are quoted and separated by ","; the col-th one (col >= 1) starts after the col-th separator.
        std::size_t start = 0;
        for (std::size_t c = 0; c < col; ++c) start = line.find("\",\"", start) + 3;
        const std::size_t end = line.find('"', start);
        line = line.substr(0, start) + b.value + line.substr(end);
      }
      text += line + "\n";
    }
    try {
      import_ncu_kernels(NcuRawTable::parse(text), "none", "q.ncu-rep");
      ADD_FAILURE() << b.column << " = " << b.value << " accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(std::string("q.ncu-rep: kernel row 0.") + b.column + ":", 0), 0u)
          << e.what();
    }
  }
}

// Found by fuzz_ncu_csv (tests/fuzz/regressions/fuzz_ncu_csv/invalid_utf8_stall_column): a stall column whose name
// held a byte that is not UTF-8 made the stall list's JSON throw a type_error, which the CLI reported as exit 1.
TEST(NcuRawTable, RefusesTextThatIsNotUtf8AsBadInput) {
  std::string text = fixture("ncu_raw_quick_tf32_1024_h100.csv");
  const std::size_t at = text.find("stalled_barrier");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + 10, "\x81");
  try {
    NcuRawTable::parse(text);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not UTF-8"), std::string::npos) << e.what();
  }
}

// Found by fuzz_ncu_csv (tests/fuzz/regressions/fuzz_ncu_csv/duplicate_column_name): a header naming one column
// twice made column_names() write past the end of its vector (ASan saw a leak of the strings written there).
TEST(NcuRawTable, RefusesAColumnNamedTwice) {
  std::string text = fixture("ncu_raw_quick_tf32_1024_h100.csv");
  const std::size_t at = text.find("\"Process Name\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 14, "\"Process ID\"");
  try {
    NcuRawTable::parse(text);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("column 'Process ID' appears twice"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gemmtune
