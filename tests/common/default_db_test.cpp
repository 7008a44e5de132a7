// default_db: where gemmtune's db lives when nobody names one ($GEMMTUNE_DB, else the per-user XDG cache file), and
// that its directories are made at the first write, or the write refused naming the variable that placed it.
#include "common/default_db.hpp"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "support/scoped_env.hpp"
#include "support/scratch_dir.hpp"

namespace gemmtune {
namespace {

namespace fs = std::filesystem;

TEST(DefaultDb, GemmtuneDbWinsOverTheCacheDirectories) {
  const auto db = default_db_for("/data/tune.db", "/xdg", "/home/u");
  ASSERT_TRUE(db);
  EXPECT_EQ(db->path, "/data/tune.db");
  EXPECT_EQ(db->set_by, "GEMMTUNE_DB");
}

TEST(DefaultDb, XdgCacheHomeHoldsItWhereGemmtuneDbIsUnsetOrEmpty) {
  for (const char* gemmtune_db : {static_cast<const char*>(nullptr), ""}) {
    const auto db = default_db_for(gemmtune_db, "/xdg", "/home/u");
    ASSERT_TRUE(db);
    EXPECT_EQ(db->path, "/xdg/gemmtune/gemmtune.db");
    EXPECT_EQ(db->set_by, "XDG_CACHE_HOME");
  }
}

TEST(DefaultDb, HomesDotCacheWhereXdgCacheHomeIsUnsetEmptyOrRelative) {
  for (const char* xdg : {static_cast<const char*>(nullptr), "", "relative/cache"}) {
    const auto db = default_db_for(nullptr, xdg, "/home/u");
    ASSERT_TRUE(db);
    EXPECT_EQ(db->path, "/home/u/.cache/gemmtune/gemmtune.db");
    EXPECT_EQ(db->set_by, "HOME");
  }
}

TEST(DefaultDb, NoVariableGivesNoPlaceAndTheErrorSaysWhatToSet) {
  EXPECT_FALSE(default_db_for(nullptr, nullptr, nullptr));
  test::ScopedEnv env;
  env.unset("GEMMTUNE_DB").unset("XDG_CACHE_HOME").unset("HOME");
  try {
    default_db();
    ADD_FAILURE() << "a default db without any variable";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("set GEMMTUNE_DB"), std::string::npos) << e.what();
  }
}

TEST(DefaultDb, ReadsThisProcesssEnvironment) {
  test::ScopedEnv env;
  env.unset("GEMMTUNE_DB").set("XDG_CACHE_HOME", "/xdg").set("HOME", "/home/u");
  EXPECT_EQ(default_db().path, "/xdg/gemmtune/gemmtune.db");
  env.set("GEMMTUNE_DB", "/data/tune.db");
  EXPECT_EQ(default_db().path, "/data/tune.db");
}

TEST(DefaultDb, FirstWriteCreatesTheCacheDirectories) {
  const test::ScratchDir scratch;
  test::ScopedEnv env;
  env.unset("GEMMTUNE_DB").set("XDG_CACHE_HOME", scratch.path("cache"));
  const std::string path = default_db().path;
  EXPECT_EQ(path, scratch.path("cache/gemmtune/gemmtune.db"));
  EXPECT_FALSE(fs::exists(scratch.path("cache")));
  prepare_default_db_write(path);
  EXPECT_TRUE(fs::is_directory(scratch.path("cache/gemmtune")));
  EXPECT_FALSE(fs::exists(path)) << "the directories are made; the db itself is the writer's to create";
}

TEST(DefaultDb, FirstWriteCreatesGemmtuneDbsDirectoriesToo) {
  const test::ScratchDir scratch;
  test::ScopedEnv env;
  env.set("GEMMTUNE_DB", scratch.path("a/b/tune.db"));
  prepare_default_db_write(scratch.path("a/b/tune.db"));
  EXPECT_TRUE(fs::is_directory(scratch.path("a/b")));
}

TEST(DefaultDb, ANamedDbIsLeftAsItIs) {
  const test::ScratchDir scratch;
  test::ScopedEnv env;
  env.unset("GEMMTUNE_DB").set("XDG_CACHE_HOME", scratch.path("cache"));
  prepare_default_db_write(scratch.path("elsewhere/named.db"));
  EXPECT_FALSE(fs::exists(scratch.path("elsewhere")));
  EXPECT_FALSE(fs::exists(scratch.path("cache")));
}

// A path through a regular file cannot be created, even by root (CI runs as root, which file modes do not stop).
void expect_refused_naming(const std::string& path, const std::string& variable) {
  try {
    prepare_default_db_write(path);
    ADD_FAILURE() << "wrote " << path;
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("placed by " + variable), std::string::npos) << what;
    EXPECT_NE(what.find("set GEMMTUNE_DB"), std::string::npos) << what;
  }
}

TEST(DefaultDb, AnUnwritableCacheDirectoryIsRefusedNamingXdgCacheHome) {
  const test::ScratchDir scratch;
  test::write_bytes(scratch.path("file"), "not a directory");
  test::ScopedEnv env;
  env.unset("GEMMTUNE_DB").set("XDG_CACHE_HOME", scratch.path("file"));
  expect_refused_naming(default_db().path, "XDG_CACHE_HOME");
}

TEST(DefaultDb, AnUnwritableGemmtuneDbIsRefusedNamingIt) {
  const test::ScratchDir scratch;
  test::write_bytes(scratch.path("file"), "not a directory");
  test::ScopedEnv env;
  env.set("GEMMTUNE_DB", scratch.path("file/tune.db"));
  expect_refused_naming(scratch.path("file/tune.db"), "GEMMTUNE_DB");
}

TEST(DefaultDb, AnUnwritableHomeCacheIsRefusedNamingHome) {
  const test::ScratchDir scratch;
  fs::create_directories(scratch.path("home"));
  test::write_bytes(scratch.path("home/.cache"), "not a directory");
  test::ScopedEnv env;
  env.unset("GEMMTUNE_DB").unset("XDG_CACHE_HOME").set("HOME", scratch.path("home"));
  expect_refused_naming(scratch.path("home/.cache/gemmtune/gemmtune.db"), "HOME");
}

}  // namespace
}  // namespace gemmtune
