// ScratchDir: a fresh private directory under $TMPDIR (else /tmp), gone with everything in it when the object goes.
#include "common/scratch_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "support/scratch_dir.hpp"

namespace gemmtune {
namespace {

namespace fs = std::filesystem;

// Sets TMPDIR for one test and puts back what was there.
class TmpdirOverride {
 public:
  explicit TmpdirOverride(const std::string& value) {
    if (const char* old = std::getenv("TMPDIR")) old_ = old;
    ::setenv("TMPDIR", value.c_str(), 1);
  }
  ~TmpdirOverride() {
    if (old_)
      ::setenv("TMPDIR", old_->c_str(), 1);
    else
      ::unsetenv("TMPDIR");
  }
  TmpdirOverride(const TmpdirOverride&) = delete;
  TmpdirOverride& operator=(const TmpdirOverride&) = delete;

 private:
  std::optional<std::string> old_;
};

TEST(ScratchDir, IsAFreshEmptyDirectoryUnderTmpdirNamedForItsPrefix) {
  test::ScratchDir base;
  const TmpdirOverride tmpdir(base.path());
  const ScratchDir a("gemmtune-unit");
  const ScratchDir b("gemmtune-unit");
  EXPECT_NE(a.path(), b.path());
  EXPECT_EQ(fs::path(a.path()).parent_path(), fs::path(base.path()));
  EXPECT_EQ(fs::path(a.path()).filename().string().rfind("gemmtune-unit-", 0), 0u) << a.path();
  EXPECT_TRUE(fs::is_directory(a.path()));
  EXPECT_TRUE(fs::is_empty(a.path()));
  EXPECT_EQ(a.path("x.json"), a.path() + "/x.json");
  EXPECT_FALSE(fs::exists(a.path("x.json"))) << "path(name) creates nothing";
}

TEST(ScratchDir, IsRemovedWithEverythingInItWhenItGoes) {
  std::string path;
  {
    const ScratchDir dir("gemmtune-unit");
    path = dir.path();
    fs::create_directories(dir.path("sub/deeper"));
    std::ofstream(dir.path("sub/deeper/record.json")) << "{}";
    ASSERT_TRUE(fs::exists(dir.path("sub/deeper/record.json")));
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST(ScratchDir, AMissingTmpdirIsACheckErrorNamingThePath) {
  test::ScratchDir base;
  const TmpdirOverride tmpdir(base.path("missing"));
  try {
    const ScratchDir dir("gemmtune-unit");
    FAIL() << "created " << dir.path();
  } catch (const CheckError& e) {
    EXPECT_NE(std::string(e.what()).find(base.path("missing") + "/gemmtune-unit-XXXXXX"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gemmtune
