// `gemmtune report` as users run it: report.json always, the HTML page and plots where a Python with matplotlib is
// installed (skipped, and said so, where it is not).
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "db/tuning_db.hpp"
#include "profiler/process.hpp"
#include "support/run_gemmtune.hpp"
#include "support/scratch_dir.hpp"
#include "support/tuning_fixtures.hpp"

namespace gemmtune {
namespace {

using test::run_gemmtune;

class ReportCli : public ::testing::Test {
 protected:
  ReportCli() {
    TuningDb db(db_path());
    const std::int64_t run = db.begin_run(test::test_run(test::test_device("NVIDIA H100 80GB HBM3")));
    for (int m : {256, 1024}) {
      const GemmProblem p = test::test_problem(m, m, m);
      db.store_problem(run, p, {test::lt_record(p, 5, m * 0.05), test::own_record(p, "tf32_64x64x32", m * 0.04)});
    }
    db.finish_run(run);
  }
  std::string db_path() const { return scratch.path("t.db"); }
  test::ScratchDir scratch;
};

// The first of python3 and /usr/bin/python3 that imports matplotlib; empty when neither does.
std::string python_with_matplotlib() {
  for (const char* python : {"python3", "/usr/bin/python3"}) {
    try {
      if (capture_process({python, "-c", "import matplotlib"}).status == 0) return python;
    } catch (const std::exception&) {
    }
  }
  return "";
}

TEST_F(ReportCli, JsonOnlyWritesTheReportDataWithoutPython) {
  const auto r = run_gemmtune({"report", "--db", db_path(), "--out", scratch.path("out"), "--json-only"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto data = nlohmann::json::parse(test::read_bytes(scratch.path("out/report.json")));
  ASSERT_EQ(data["devices"].size(), 1u);
  EXPECT_EQ(data["devices"][0]["latest_run"]["speedups"].size(), 2u);
  EXPECT_EQ(data["devices"][0]["cache"].size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(scratch.path("out/index.html")));
}

TEST_F(ReportCli, PageHasEveryPlotInlineAndBesideIt) {
  const std::string python = python_with_matplotlib();
  if (python.empty()) GTEST_SKIP() << "no Python with matplotlib (apt-get install python3-matplotlib)";
  const auto r = run_gemmtune({"report", "--db", db_path(), "--out", scratch.path("out"), "--python", python});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string page = test::read_bytes(scratch.path("out/index.html"));
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  std::size_t inline_images = 0;
  for (std::size_t at = page.find("data:image/png;base64,"); at != std::string::npos;
       at = page.find("data:image/png;base64,", at + 1))
    ++inline_images;
  EXPECT_EQ(inline_images, 3u);  // throughput, speedup, roofline
  for (const char* plot : {"tflops", "speedup", "roofline"})
    for (const char* ext : {".png", ".svg"})
      EXPECT_TRUE(std::filesystem::exists(scratch.path(std::string("out/") + plot + "-nvidia-h100-80gb-hbm3" + ext)))
          << plot << ext;
}

TEST(ReportCliErrors, MissingDbOrScriptIsBadInput) {
  test::ScratchDir scratch;
  EXPECT_EQ(run_gemmtune({"report", "--db", scratch.path("none.db"), "--out", scratch.path("o")}).exit_code, 2);
  TuningDb(scratch.path("t.db"));
  const auto r = run_gemmtune(
      {"report", "--db", scratch.path("t.db"), "--out", scratch.path("o"), "--script", scratch.path("no.py")});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no.py"), std::string::npos) << r.output;
}

// A user without Python or matplotlib learns what to install, not a Python traceback, and no page is half written.
TEST(ReportCliErrors, MissingPythonOrMatplotlibNamesWhatToInstall) {
  test::ScratchDir scratch;
  TuningDb(scratch.path("t.db"));
  for (const char* python : {"no-such-python-for-gemmtune", "/bin/false"}) {
    const auto r = run_gemmtune({"report", "--db", scratch.path("t.db"), "--out", scratch.path("o"), "--python", python});
    EXPECT_EQ(r.exit_code, 2) << python << ": " << r.output;
    EXPECT_NE(r.output.find("python3-matplotlib"), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(scratch.path("o/index.html")));
  }
}

}  // namespace
}  // namespace gemmtune
