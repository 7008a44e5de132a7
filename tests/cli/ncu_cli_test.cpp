// `gemmtune ncu` and `gemmtune ncu import` as users run them, without a GPU or ncu: the printed command, where the
// candidate and the --top cases come from, --exec's exit status, and the import of a real ncu CSV (through a
// stand-in ncu that prints the checked-in fixture).
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "db/tuning_db.hpp"
#include "support/run_gemmtune.hpp"
#include "support/scratch_dir.hpp"
#include "support/tuning_fixtures.hpp"

namespace gemmtune {
namespace {

using test::run_gemmtune;

const std::vector<std::string> kCase = {"ncu", "--m", "1024", "--n", "1024", "--k", "1024"};
const std::string kLt = "lt/a43-t18-s34-k1-r0-w0-c0-cl5-i0";

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// An executable shell script standing in for ncu.
std::string fake_tool(const test::ScratchDir& dir, const std::string& name, const std::string& body) {
  const std::string path = dir.path(name);
  test::write_bytes(path, "#!/bin/sh\n" + body + "\n");
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

TEST(NcuCli, PrintsTheCommandForANamedCandidateWithoutAGpu) {
  const auto r = run_gemmtune(with(kCase, {"--candidate", kLt}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "--nvtx --nvtx-include 'gemmtune@fwd:1024x1024x1024:nn:row:none:tf32|lt|a43-t18-s34-"
                                 "k1-r0-w0-c0-cl5-i0/'"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "--clock-control none --cache-control none")) << r.output;
  EXPECT_TRUE(contains(r.output, "--section SpeedOfLight")) << r.output;
  const std::string binary = std::filesystem::canonical(GEMMTUNE_BINARY).string();
  EXPECT_TRUE(contains(r.output, binary + " run --m 1024 --n 1024 --k 1024 --mode tf32 --candidate " + kLt +
                                     " --warmup 5 --iters 3"))
      << r.output;
}

TEST(NcuCli, EpilogueAndLayoutOptionsComeBackInTheRunLine) {
  const auto r = run_gemmtune({"ncu", "--m", "64", "--n", "32", "--k", "16", "--layout", "tn", "--out", "col",
                               "--bias", "--act", "leaky_relu", "--leaky-slope", "0.2", "--save-z", "--dropout",
                               "0.1", "--mode", "fp32", "--candidate", "own/fp32_simt_64x64x8", "--set", "full"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, " run --m 64 --n 32 --k 16 --layout tn --out col --bias --act leaky_relu "
                                 "--leaky-slope 0.2 --save-z --dropout 0.1 --mode fp32 --candidate "
                                 "own/fp32_simt_64x64x8"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "'gemmtune@fwd:64x32x16:tn:col:bias+leaky_relu=0.2+z+dropout=0.1:fp32|own|"
                                 "fp32_simt_64x64x8/'"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "--set full")) << r.output;
}

TEST(NcuCli, WithoutACandidateOrADbItSaysWhatToGive) {
  const auto r = run_gemmtune(kCase);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--candidate ID")) << r.output;
}

TEST(NcuCli, BadSetOrCacheControlOrCandidateIsBadUsage) {
  EXPECT_EQ(run_gemmtune(with(kCase, {"--candidate", kLt, "--set", "nosuch"})).exit_code, 2);
  EXPECT_EQ(run_gemmtune(with(kCase, {"--candidate", kLt, "--cache-control", "some"})).exit_code, 2);
  EXPECT_EQ(run_gemmtune(with(kCase, {"--candidate", "lt/nonsense"})).exit_code, 2);
  EXPECT_EQ(run_gemmtune(with(kCase, {"--candidate", kLt, "--set", "quick", "--section", "Occupancy"})).exit_code, 2);
}

class NcuDbCli : public ::testing::Test {
 protected:
  NcuDbCli() {
    TuningDb db(db_path());
    const std::int64_t run = db.begin_run(test::test_run(h100()));
    // tf32 at 347 µs is at 80% of its bound, 1024³ at 60 µs at 7%, fp32 4096³ at 2691 µs at 76%.
    for (auto [m, mode, us] : {std::tuple{4096, MathMode::Tf32, 347.0}, std::tuple{1024, MathMode::Tf32, 60.0},
                               std::tuple{4096, MathMode::Fp32, 2691.0}}) {
      const GemmProblem p = test::test_problem(m, m, m, mode);
      db.store_problem(run, p, {test::lt_record(p, 5, us)});
    }
  }
  static DeviceIdentity h100() { return test::test_device("NVIDIA H100 80GB HBM3"); }
  std::string db_path() const { return scratch.path("t.db"); }
  test::ScratchDir scratch;
};

TEST_F(NcuDbCli, CandidateComesFromTheDbsCache) {
  const auto r = run_gemmtune({"ncu", "--m", "1024", "--n", "1024", "--k", "1024", "--bias", "--act", "gelu",
                               "--db", db_path()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string cached = test::lt_record(test::test_problem(1024, 1024, 1024), 5, 1).candidate.id();
  EXPECT_TRUE(contains(r.output, "--candidate " + cached)) << r.output;
  EXPECT_TRUE(contains(r.output, "# then: ")) << r.output;  // the import line, since a db was given
}

TEST_F(NcuDbCli, TopPicksTheCasesFurthestBelowTheirRoofline) {
  const auto r = run_gemmtune({"ncu", "--db", db_path(), "--top", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::size_t first = r.output.find("# fwd:1024x1024x1024");
  const std::size_t second = r.output.find("# fwd:4096x4096x4096:nn:row:bias+gelu:fp32");
  EXPECT_NE(first, std::string::npos) << r.output;
  EXPECT_NE(second, std::string::npos) << r.output;
  EXPECT_LT(first, second);
  EXPECT_FALSE(contains(r.output, "# fwd:4096x4096x4096:nn:row:bias+gelu:tf32")) << r.output;
  EXPECT_TRUE(contains(r.output, "% of its compute bound")) << r.output;
}

TEST_F(NcuDbCli, ExecRunsNcuAndExitsWithItsStatus) {
  const std::string ncu = fake_tool(scratch, "ncu", "exit 7");
  const auto r = run_gemmtune(with(kCase, {"--candidate", kLt, "--exec", "--ncu", ncu, "--out-dir",
                                           scratch.path("reports")}));
  EXPECT_EQ(r.exit_code, 7) << r.output;
  EXPECT_TRUE(std::filesystem::is_directory(scratch.path("reports")));
}

TEST_F(NcuDbCli, ImportStoresEveryKernelOfEveryCaseUnderTheReportsGpu) {
  const std::string fixture = std::string(GEMMTUNE_SOURCE_DIR) + "/tests/profiler/fixtures/ncu_raw_workload_h100.csv";
  const std::string ncu = fake_tool(scratch, "ncu", "cat '" + fixture + "'");
  const std::string report = scratch.path("x__cc-none.ncu-rep");
  test::write_bytes(report, "stand-in report");
  const auto r = run_gemmtune({"ncu", "import", report, "--db", db_path(), "--ncu", ncu});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "imported 8 kernel(s) of 2 case(s)")) << r.output;
  EXPECT_TRUE(contains(r.output, "skipped 2 kernel(s) outside any case range")) << r.output;
  const auto rows = TuningDb(db_path(), TuningDb::Access::ReadOnly).ncu_metrics(h100().key());
  ASSERT_EQ(rows.size(), 8u);
  for (const NcuKernelMetrics& k : rows) {
    EXPECT_EQ(k.cache_control, "none");
    EXPECT_EQ(k.report_path, report);
    EXPECT_GT(k.duration_us, 15.0);
  }
}

TEST_F(NcuDbCli, ImportOfAReportNcuCannotReadIsBadInputAndStoresNothing) {
  const std::string ncu = fake_tool(scratch, "ncu", "echo '==ERROR== Failed to open report' >&2; exit 1");
  const std::string report = scratch.path("broken.ncu-rep");
  test::write_bytes(report, "not a report");
  const auto r = run_gemmtune({"ncu", "import", report, "--db", db_path(), "--ncu", ncu});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "Failed to open report")) << r.output;
  EXPECT_TRUE(TuningDb(db_path(), TuningDb::Access::ReadOnly).ncu_metrics(h100().key()).empty());
  EXPECT_EQ(run_gemmtune({"ncu", "import", scratch.path("missing.ncu-rep"), "--db", db_path()}).exit_code, 2);
}

TEST(NcuImportCli, ReportOfAGpuTheDbHasNoRunOnNeedsADeviceKey) {
  test::ScratchDir scratch;
  const std::string fixture = std::string(GEMMTUNE_SOURCE_DIR) + "/tests/profiler/fixtures/ncu_raw_workload_h100.csv";
  const std::string ncu = fake_tool(scratch, "ncu", "cat '" + fixture + "'");
  const std::string report = scratch.path("r.ncu-rep");
  test::write_bytes(report, "stand-in report");
  const auto r = run_gemmtune({"ncu", "import", report, "--db", scratch.path("empty.db"), "--ncu", ncu});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--device-key")) << r.output;
  const auto made_up = run_gemmtune({"ncu", "import", report, "--db", scratch.path("empty.db"), "--ncu", ncu,
                                     "--device-key", "my-h100", "--cache-control", "all"});
  EXPECT_EQ(made_up.exit_code, 2) << made_up.output;  // a key gemmtune never writes is not filed into the db
  EXPECT_TRUE(contains(made_up.output, "device key 'my-h100'")) << made_up.output;
  const std::string h100 = test::test_device("NVIDIA H100 80GB HBM3").key();
  const auto ok = run_gemmtune({"ncu", "import", report, "--db", scratch.path("empty.db"), "--ncu", ncu,
                                "--device-key", h100, "--cache-control", "all"});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_EQ(TuningDb(scratch.path("empty.db"), TuningDb::Access::ReadOnly).ncu_metrics(h100).size(), 8u);
}

}  // namespace
}  // namespace gemmtune
