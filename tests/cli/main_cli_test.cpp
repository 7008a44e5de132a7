// The top level's contract (src/cli/main.cpp): --version and --help exit 0; a usage error exits 2 with one line that
// says what was wrong and what is accepted instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "support/run_gemmtune.hpp"

namespace gemmtune {
namespace {

using test::run_gemmtune;

// One line: what a script's log or CI shows in full.
bool one_error_line(const std::string& output) {
  return output.rfind("gemmtune: error: ", 0) == 0 && std::count(output.begin(), output.end(), '\n') == 1;
}

TEST(MainCli, VersionExitsZero) {
  const auto r = run_gemmtune({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("gemmtune "), std::string::npos);
}

TEST(MainCli, HelpOfASubcommandExitsZeroWithItsOptions) {
  const auto r = run_gemmtune({"cache", "merge", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("cache merge"), std::string::npos) << r.output;
}

TEST(MainCli, AnUnknownSubcommandIsNamedWithTheSubcommandsThereAre) {
  const auto r = run_gemmtune({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(one_error_line(r.output)) << r.output;
  EXPECT_NE(r.output.find("unknown subcommand 'frobnicate'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("sweep"), std::string::npos) << r.output;
}

TEST(MainCli, AnOptionBeforeTheSubcommandIsNamedNotTakenForAMissingSubcommand) {
  const auto r = run_gemmtune({"--no-such-flag", "sweep"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(one_error_line(r.output)) << r.output;
  EXPECT_NE(r.output.find("unknown option '--no-such-flag'"), std::string::npos) << r.output;
}

TEST(MainCli, NoSubcommandListsThemOnOneLine) {
  const auto r = run_gemmtune({});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(one_error_line(r.output)) << r.output;
  EXPECT_NE(r.output.find("give gemmtune a subcommand: devices"), std::string::npos) << r.output;
}

TEST(MainCli, ANestedCommandWithoutItsSubcommandListsThem) {
  const auto r = run_gemmtune({"cache"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(one_error_line(r.output)) << r.output;
  EXPECT_NE(r.output.find("give gemmtune cache a subcommand: show, export, import, merge"), std::string::npos)
      << r.output;
}

TEST(MainCli, AnUnknownSubcommandOfANestedCommandIsNamedWithItsSubcommands) {
  const auto r = run_gemmtune({"cache", "nosuch", "--db", "x.db"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(one_error_line(r.output)) << r.output;
  EXPECT_NE(r.output.find("unknown subcommand 'nosuch' of gemmtune cache: one of show, export, import, merge"),
            std::string::npos)
      << r.output;
}

TEST(MainCli, AnUnknownOptionOfASubcommandIsOneLineThatPointsToItsHelp) {
  const auto r = run_gemmtune({"sweep", "--profile", "quick", "--no-such-flag"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(one_error_line(r.output)) << r.output;
  EXPECT_NE(r.output.find("--no-such-flag"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("gemmtune sweep --help"), std::string::npos) << r.output;
}

TEST(MainCli, AMissingRequiredOptionIsOneLineThatPointsToItsHelp) {
  const auto r = run_gemmtune({"run", "--m", "4"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(one_error_line(r.output)) << r.output;
  EXPECT_NE(r.output.find("--n is required (gemmtune run --help"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace gemmtune
