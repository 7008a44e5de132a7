// The gate as CI runs it: the real binary, sweep JSON files on disk, exit codes 0 / 1 / 2.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/run_gemmtune.hpp"
#include "support/scratch_dir.hpp"
#include "support/sweep_fixture.hpp"

namespace gemmtune {
namespace {

using nlohmann::json;
using test::run_gemmtune;

constexpr int kCases = 10;

class GateCli : public ::testing::Test {
 protected:
  test::CommandResult gate(const json& current, std::vector<std::string> extra = {}) {
    test::write_bytes(scratch.path("baseline.json"), baseline.dump());
    test::write_bytes(scratch.path("current.json"), current.dump());
    std::vector<std::string> args = {"gate", "--baseline", scratch.path("baseline.json"), "--current",
                                     scratch.path("current.json")};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_gemmtune(args);
  }
  std::size_t regressed_lines(const std::string& output) const {
    std::size_t n = 0;
    for (std::size_t pos = output.find("\nREGRESSED "); pos != std::string::npos;
         pos = output.find("\nREGRESSED ", pos + 1))
      ++n;
    return n;
  }
  test::ScratchDir scratch;
  json baseline = test::sweep_document(kCases);
};

TEST_F(GateCli, IdenticalRunsExitZero) {
  const auto r = gate(baseline);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PASSED: no regression in 10 cases"), std::string::npos) << r.output;
}

TEST_F(GateCli, EveryMedianTenPercentSlowerExitsOneNamingEveryCase) {
  json cur = baseline;
  test::scale_all_results(cur, 1.10);
  const auto r = gate(cur);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(regressed_lines(r.output), static_cast<std::size_t>(kCases)) << r.output;
  for (int i = 0; i < kCases; ++i)
    EXPECT_NE(r.output.find(test::result_key(baseline, i)), std::string::npos) << i;
  EXPECT_NE(r.output.find("FAILED: 10 of 10 cases regressed"), std::string::npos) << r.output;
}

TEST_F(GateCli, EveryMedianThreePercentSlowerPassesAtTheDefaultThreshold) {
  json cur = baseline;
  test::scale_all_results(cur, 1.03);
  const auto r = gate(cur);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PASSED"), std::string::npos) << r.output;
}

TEST_F(GateCli, OneCaseFiftyPercentSlowerExitsOneNamingExactlyThatCase) {
  json cur = baseline;
  test::scale_result(cur, 4, 1.5);
  const auto r = gate(cur, {"--junit", scratch.path("gate.xml"), "--markdown", scratch.path("gate.md"), "--json",
                            scratch.path("gate.json")});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  ASSERT_EQ(regressed_lines(r.output), 1u) << r.output;
  const std::size_t start = r.output.find("\nREGRESSED ") + 1;
  const std::string line = r.output.substr(start, r.output.find('\n', start) - start);
  EXPECT_NE(line.find(test::result_key(baseline, 4)), std::string::npos) << line;

  const std::string xml = test::read_bytes(scratch.path("gate.xml"));
  EXPECT_NE(xml.find("failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(test::read_bytes(scratch.path("gate.md")).find("REGRESSED"), std::string::npos);
  const json report = json::parse(test::read_bytes(scratch.path("gate.json")));
  EXPECT_EQ(report["outcome"], "regressed");
  EXPECT_EQ(report["cases"][0]["key"], test::result_key(baseline, 4));
}

TEST_F(GateCli, NoisyCasesWithinTheirNoiseExitZero) {
  for (json& rec : baseline["results"]) {
    rec["p10_us"] = rec["median_us"].get<double>() * 0.75;
    rec["p90_us"] = rec["median_us"].get<double>() * 1.35;
  }
  json cur = baseline;
  test::scale_all_results(cur, 1.15);
  const auto r = gate(cur);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("within noise"), std::string::npos) << r.output;
}

TEST_F(GateCli, DifferentDeviceKeyExitsTwo) {
  const auto r = gate(test::sweep_document(kCases, "ci", "NVIDIA Other GPU"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("different devices"), std::string::npos) << r.output;
}

TEST_F(GateCli, MissingCasesExitTwoUnlessAllowed) {
  json cur = baseline;
  cur["results"].erase(2);
  cur["results"].erase(5);
  EXPECT_EQ(gate(cur).exit_code, 2);
  EXPECT_EQ(gate(cur, {"--allow-missing", "1"}).exit_code, 2);
  const auto r = gate(cur, {"--allow-missing", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(GateCli, UnreadableOrMalformedInputsExitTwo) {
  test::write_bytes(scratch.path("baseline.json"), baseline.dump());
  test::write_bytes(scratch.path("broken.json"), baseline.dump().substr(0, 200));
  for (const std::string& current : {scratch.path("broken.json"), scratch.path("absent.json")}) {
    const auto r = run_gemmtune({"gate", "--baseline", scratch.path("baseline.json"), "--current", current});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(current), std::string::npos) << r.output;
  }
  EXPECT_EQ(run_gemmtune({"gate", "--baseline", scratch.path("baseline.json")}).exit_code, 2);
  EXPECT_EQ(run_gemmtune({"gate", "--baseline", scratch.path("baseline.json"), "--current",
                          scratch.path("baseline.json"), "--threshold", "-3"})
                .exit_code,
            2);
}

}  // namespace
}  // namespace gemmtune
