// The CPU check that a committed baseline is still what this build would measure. Fixtures are made from the plan
// itself (tests/support/sweep_fixture.hpp), so they follow the registry and the ci profile as they change.
#include "gate/baseline_check.hpp"

#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/sweep_fixture.hpp"

namespace gemmtune {
namespace {

using nlohmann::json;

class BaselineCheckTest : public ::testing::Test {
 protected:
  BaselineCheck check(const json& doc) const {
    return check_baseline(sweep_results_from_json(doc, "results/test-gpu/baseline.json"), plan);
  }
  std::size_t device_dependent() const {
    std::size_t n = 0;
    for (const PlannedProblemKeys& p : plan.problems) n += p.own_device_dependent.size();
    return n;
  }
  // Index of the first own-kernel record of the document.
  static std::size_t first_own(const json& doc) {
    for (std::size_t i = 0; i < doc["results"].size(); ++i)
      if (doc["results"][i]["candidate"]["backend"] == "own") return i;
    ADD_FAILURE() << "no own record";
    return 0;
  }
  static std::string text(const BaselineCheck& c) {
    std::ostringstream out;
    write_baseline_check(out, c);
    return out.str();
  }
  PlannedKeys plan = test::source_tree_plan_keys("ci");
  json matching = test::sweep_document_for_plan(plan);
};

TEST_F(BaselineCheckTest, BaselineMadeFromThePlanPasses) {
  ASSERT_FALSE(plan.problems.empty());
  const BaselineCheck c = check(matching);
  EXPECT_TRUE(c.ok()) << text(c);
  EXPECT_EQ(c.problems_checked, static_cast<int>(plan.problems.size()));
  EXPECT_GT(c.own_candidates_checked, 0);
  EXPECT_NE(text(c).find("is current"), std::string::npos);
}

// Without an sm_90 GPU (CPU CI) the wgmma and cluster variants are not in this machine's plan; the baseline of a GPU
// that ran them must hold every one, the baseline of a GPU that did not holds none.
TEST_F(BaselineCheckTest, FamiliesThisMachineCannotRunAreCheckedAsTheBaselinesGpuRanThem) {
  if (device_dependent() == 0) GTEST_SKIP() << "this machine's GPU runs every family: nothing device-dependent";
  EXPECT_TRUE(check(test::sweep_document_for_plan(plan, false)).ok());
  const BaselineCheck all = check(matching);
  EXPECT_TRUE(all.ok()) << text(all);
  for (const auto& [limit, ran] : all.device_limits_ran) EXPECT_TRUE(ran) << limit;

  json doc = matching;
  std::string removed_key;
  for (const PlannedProblemKeys& p : plan.problems)
    if (!p.own_device_dependent.empty()) removed_key = p.problem_key + "/" + p.own_device_dependent.front().id;
  json kept = json::array();
  for (const json& r : doc["results"])
    if (r["key"] != removed_key) kept.push_back(r);
  doc["results"] = kept;
  const BaselineCheck c = check(doc);
  ASSERT_EQ(c.missing.size(), 1u) << text(c);
  EXPECT_EQ(c.missing[0].key, removed_key);
}

TEST_F(BaselineCheckTest, BaselineWithOneOwnCandidateRemovedFailsNamingIt) {
  json doc = matching;
  const std::size_t i = first_own(doc);
  const std::string key = test::result_key(doc, i);
  doc["results"].erase(i);
  const BaselineCheck c = check(doc);
  EXPECT_FALSE(c.ok());
  EXPECT_TRUE(c.stale.empty());
  ASSERT_EQ(c.missing.size(), 1u);
  EXPECT_EQ(c.missing[0].key, key);
  const std::string out = text(c);
  EXPECT_NE(out.find("missing: " + key), std::string::npos) << out;
  EXPECT_NE(out.find("scripts/record_baseline.sh"), std::string::npos) << out;
}

TEST_F(BaselineCheckTest, BaselineWithACandidateTheBuildLacksFailsNamingIt) {
  json doc = matching;
  json ghost = doc["results"][first_own(doc)];
  const std::string problem = ghost["problem_key"].get<std::string>();
  ghost["candidate"]["id"] = "own/tf32_999x999x32_s9";
  ghost["candidate"]["variant"] = "tf32_999x999x32_s9";
  ghost["key"] = problem + "/own/tf32_999x999x32_s9";
  doc["results"].push_back(ghost);
  const BaselineCheck c = check(doc);
  EXPECT_FALSE(c.ok());
  EXPECT_TRUE(c.missing.empty());
  ASSERT_EQ(c.stale.size(), 1u);
  EXPECT_EQ(c.stale[0].key, ghost["key"].get<std::string>());
  EXPECT_EQ(c.stale[0].why, "no kernel variant of that name in this build");
}

TEST_F(BaselineCheckTest, OwnVariantOfAnotherModeOnAProblemIsStaleForThatProblem) {
  json doc = matching;
  // A variant this build has, recorded on a problem of the other mode (the plan never pairs them).
  std::string tf32_variant;
  std::size_t fp32_record = doc["results"].size();
  for (std::size_t i = 0; i < doc["results"].size(); ++i) {
    const json& r = doc["results"][i];
    if (r["candidate"]["backend"] != "own") continue;
    const std::string pk = r["problem_key"].get<std::string>();
    if (tf32_variant.empty() && pk.substr(pk.size() - 5) == ":tf32") tf32_variant = r["candidate"]["variant"];
    if (fp32_record == doc["results"].size() && pk.substr(pk.size() - 5) == ":fp32") fp32_record = i;
  }
  ASSERT_FALSE(tf32_variant.empty());
  ASSERT_LT(fp32_record, doc["results"].size());
  json wrong = doc["results"][fp32_record];
  wrong["candidate"]["id"] = "own/" + tf32_variant;
  wrong["key"] = wrong["problem_key"].get<std::string>() + "/own/" + tf32_variant;
  doc["results"].push_back(wrong);
  const BaselineCheck c = check(doc);
  ASSERT_EQ(c.stale.size(), 1u);
  EXPECT_EQ(c.stale[0].why, "this build does not plan that variant for this problem");
}

TEST_F(BaselineCheckTest, ProblemsOutsideThePlanAreStaleAndPlannedOnesAbsentAreMissing) {
  json doc = matching;
  const std::string dropped_problem = doc["results"][0]["problem_key"];
  json kept = json::array();
  for (const json& r : doc["results"])
    if (r["problem_key"] != dropped_problem) kept.push_back(r);
  doc["results"] = kept;
  const json other = test::sweep_document(1);  // a problem the ci profile does not have
  doc["results"].push_back(other["results"][0]);
  const BaselineCheck c = check(doc);
  ASSERT_EQ(c.missing.size(), 1u);
  EXPECT_EQ(c.missing[0].key, dropped_problem);
  ASSERT_EQ(c.stale.size(), 1u);
  EXPECT_EQ(c.stale[0].key, other["results"][0]["problem_key"].get<std::string>());
}

TEST_F(BaselineCheckTest, CublasLtCandidatesAreNotCheckedWithoutAGpu) {
  json doc = matching;
  json own_only = json::array();
  for (const json& r : doc["results"])
    if (r["candidate"]["backend"] == "own") own_only.push_back(r);
  doc["results"] = own_only;
  EXPECT_TRUE(check(doc).ok());
}

TEST_F(BaselineCheckTest, OwnCandidateThatFailedInTheBaselineStillCountsAsRecorded) {
  json doc = matching;
  const std::size_t i = first_own(doc);
  doc["results"][i]["status"] = "verify_failed";
  EXPECT_TRUE(check(doc).ok());
}

TEST_F(BaselineCheckTest, BaselineOfAnotherProfileFails) {
  json doc = matching;
  doc["profile"] = "default";
  const BaselineCheck c = check(doc);
  EXPECT_FALSE(c.ok());
  EXPECT_NE(text(c).find("'default'-profile sweep"), std::string::npos) << text(c);
}

}  // namespace
}  // namespace gemmtune
