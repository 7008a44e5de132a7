// data_dir: gemmtune's data is found beside its executable (installed or build tree) or where the user points,
// never through the path of the sources it was built from.
#include "common/data_dir.hpp"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "support/scratch_dir.hpp"

namespace gemmtune {
namespace {

TEST(DataDir, EnvironmentWinsOverTheExecutablesPlace) {
  EXPECT_EQ(data_dir_for("/opt/gt/bin/gemmtune", "/elsewhere/data"), "/elsewhere/data");
}

TEST(DataDir, AnInstallFindsShareBesideBin) {
  test::ScratchDir scratch;
  std::filesystem::create_directories(scratch.path("prefix/bin"));
  std::filesystem::create_directories(scratch.path("prefix/share/gemmtune"));
  EXPECT_EQ(data_dir_for(scratch.path("prefix/bin/gemmtune"), nullptr), scratch.path("prefix/share/gemmtune"));
  EXPECT_EQ(data_dir_for(scratch.path("prefix/bin/gemmtune"), ""), scratch.path("prefix/share/gemmtune"));
}

TEST(DataDir, ABuildTreeFindsShareInsideItsDirectory) {
  test::ScratchDir scratch;
  std::filesystem::create_directories(scratch.path("build/share/gemmtune"));
  EXPECT_EQ(data_dir_for(scratch.path("build/gemmtune"), nullptr), scratch.path("build/share/gemmtune"));
}

TEST(DataDir, NothingThereNamesTheInstallLocation) {
  test::ScratchDir scratch;
  EXPECT_EQ(data_dir_for(scratch.path("prefix/bin/gemmtune"), nullptr), scratch.path("prefix/share/gemmtune"));
}

// The test binary (build/tests/) and the CLI (build/) both reach the build tree's data: the real profiles.
TEST(DataDir, ThisBuildsDataHoldsTheProfilesAndTheReportScript) {
  const std::string dir = data_dir();
  EXPECT_TRUE(std::filesystem::is_regular_file(dir + "/profiles/default.json")) << dir;
  EXPECT_TRUE(std::filesystem::is_regular_file(dir + "/profiles/ncu/quick.json")) << dir;
  EXPECT_TRUE(std::filesystem::is_regular_file(dir + "/scripts/report.py")) << dir;
}

}  // namespace
}  // namespace gemmtune
