// `gemmtune paths`: the db that sweep, run, cache show and a runtime given no db would use, and the variable that
// placed it, printed without a GPU.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/run_gemmtune.hpp"
#include "support/scoped_env.hpp"
#include "support/scratch_dir.hpp"

namespace gemmtune {
namespace {

using test::run_gemmtune;

TEST(PathsCli, PrintsTheXdgCacheDbAndSaysItIsNotCreatedByReading) {
  const test::ScratchDir scratch;
  test::ScopedEnv env;
  env.unset("GEMMTUNE_DB").set("XDG_CACHE_HOME", scratch.path("cache"));
  const auto r = run_gemmtune({"paths"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("db    " + scratch.path("cache/gemmtune/gemmtune.db") + "\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("placed by XDG_CACHE_HOME"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the first write creates it"), std::string::npos) << r.output;
}

TEST(PathsCli, GemmtuneDbWinsAndJsonSaysSo) {
  const test::ScratchDir scratch;
  test::ScopedEnv env;
  env.set("GEMMTUNE_DB", scratch.path("tune.db")).set("XDG_CACHE_HOME", scratch.path("cache"));
  const auto r = run_gemmtune({"paths", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json doc = nlohmann::json::parse(r.output);
  EXPECT_EQ(doc["db"], scratch.path("tune.db"));
  EXPECT_EQ(doc["db_set_by"], "GEMMTUNE_DB");
  EXPECT_EQ(doc["db_exists"], false);
  EXPECT_FALSE(doc["data_dir"].get<std::string>().empty());
}

TEST(PathsCli, NoVariableToPlaceTheDbExitsTwoSayingWhatToSet) {
  test::ScopedEnv env;
  env.unset("GEMMTUNE_DB").unset("XDG_CACHE_HOME").unset("HOME");
  const auto r = run_gemmtune({"paths"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("set GEMMTUNE_DB"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace gemmtune
