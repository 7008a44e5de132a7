// Import of a real ncu raw page: fixtures/ncu_raw_workload_h100.csv is `ncu --csv --page raw --nvtx` of the
// NcuCaseWorkload GPU test on an H100 (2 warm-up calls outside any case, 3 calls of one case, 5 of a case whose
// range name extends the first's), trimmed to 20 of its 267 columns. See fixtures/README.md.
#include "profiler/ncu_import.hpp"

#include <fstream>
#include <sstream>

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

}  // namespace
}  // namespace gemmtune
