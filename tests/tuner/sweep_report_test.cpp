// Where a sweep's time went, as its --json document and its table say: per problem, summed, and back again (what
// `sweep --devices` reads from its workers).
#include "tuner/sweep_report.hpp"

#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "support/tuning_fixtures.hpp"

namespace gemmtune {
namespace {

ProblemCost some_cost(double scale) {
  ProblemCost c;
  c.wall_s = 1.25 * scale;
  c.prepare_s = 0.0625 * scale;
  c.verify_s = 0.25 * scale;
  c.sample_s = 0.5 * scale;
  c.finalist_s = 0.375 * scale;
  c.store_s = 0.03125 * scale;
  c.candidates = 20;
  c.sampled = 5;
  c.pruned = 14;
  c.finalists = 2;
  c.out_of_reach = 1;
  return c;
}

SweepResult two_problems_and_a_resumed_one() {
  SweepResult r;
  r.run.device = test::test_device();
  r.setup_s = 0.75;
  r.wall_s = 4.5;
  for (int i = 0; i < 3; ++i) {
    ProblemResult pr;
    pr.problem = test::test_problem(256 << i, 256, 256);
    pr.resumed = i == 2;
    if (!pr.resumed) {
      pr.cost = some_cost(i + 1);
      pr.records.push_back(test::lt_record(pr.problem, 1, 10.0 + i));
    }
    r.problems.push_back(pr);
  }
  return r;
}

TEST(SweepReport, EachProblemsCostRoundTripsThroughTheJsonDocument) {
  const nlohmann::json doc = sweep_json(two_problems_and_a_resumed_one());
  ASSERT_EQ(doc.at("problems").size(), 2u);
  const ProblemCost back = cost_from_json(doc["problems"][1]);
  const ProblemCost want = some_cost(2);
  EXPECT_EQ(back.wall_s, want.wall_s);
  EXPECT_EQ(back.prepare_s, want.prepare_s);
  EXPECT_EQ(back.verify_s, want.verify_s);
  EXPECT_EQ(back.sample_s, want.sample_s);
  EXPECT_EQ(back.finalist_s, want.finalist_s);
  EXPECT_EQ(back.store_s, want.store_s);
  EXPECT_EQ(back.candidates, 20);
  EXPECT_EQ(back.sampled, 5);
  EXPECT_EQ(back.pruned, 14);
  EXPECT_EQ(back.finalists, 2);
  EXPECT_EQ(back.out_of_reach, 1);
  EXPECT_EQ(cost_from_json(nlohmann::json{{"problem_key", "x"}}).wall_s, 0) << "an older document has no cost";
}

// What the finalist stage timed, per candidate and condition, and what it kept: in the document, and back for
// --devices; a problem without a stage has none, and a document naming a kept candidate it has no record of is refused.
TEST(SweepReport, TheFinalistStagesTimesAndKeptCandidateRoundTripThroughTheJsonDocument) {
  SweepResult r = two_problems_and_a_resumed_one();
  ProblemResult& staged = r.problems[1];
  staged.records.push_back(test::own_record(staged.problem, "skinny_a", 8.0));
  staged.kept_record = 0;
  staged.evidence.conditions = {{"stream/warm", 1.0, 0.06}, {"graph/cold", 1.0, 0.06}};
  staged.finalists = {
      {"lt/first", "heuristic_first", 0.06, {{"stream/warm", 9.04, 0.01}, {"graph/cold", 9.5, 0.02}}},
      {"own/skinny_a", "challenger", 0.06, {{"stream/warm", 8.8, 0.015}, {"graph/cold", 8.9, 0.0125}}}};
  const nlohmann::json doc = sweep_json(r);
  EXPECT_FALSE(doc["problems"][0].contains("finalist_stage"));
  const nlohmann::json& stage = doc["problems"][1].at("finalist_stage");
  EXPECT_EQ(stage.at("kept"), staged.records[0].candidate.id());
  EXPECT_EQ(stage.at("evidence"), staged.evidence.encode());
  EXPECT_EQ(stage.at("finalists")[1].at("conditions")[0].at("median_us"), 8.8);

  ProblemResult back;
  back.problem = staged.problem;
  back.records = staged.records;
  finalist_stage_from_json(doc["problems"][1], back);
  EXPECT_EQ(back.kept_record, 0);
  EXPECT_EQ(back.evidence, staged.evidence);
  ASSERT_EQ(back.finalists.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.finalists[i].candidate, staged.finalists[i].candidate);
    EXPECT_EQ(back.finalists[i].role, staged.finalists[i].role);
    EXPECT_EQ(back.finalists[i].noise_bound, staged.finalists[i].noise_bound);
    ASSERT_EQ(back.finalists[i].conditions.size(), 2u);
    for (std::size_t c = 0; c < 2; ++c) {
      EXPECT_EQ(back.finalists[i].conditions[c].condition, staged.finalists[i].conditions[c].condition);
      EXPECT_EQ(back.finalists[i].conditions[c].median_us, staged.finalists[i].conditions[c].median_us);
      EXPECT_EQ(back.finalists[i].conditions[c].rel_spread, staged.finalists[i].conditions[c].rel_spread);
    }
  }

  ProblemResult untouched;
  untouched.problem = staged.problem;
  finalist_stage_from_json(doc["problems"][0], untouched);
  EXPECT_EQ(untouched.kept_record, -1);
  EXPECT_TRUE(untouched.finalists.empty());

  nlohmann::json stray = doc["problems"][1];
  stray["finalist_stage"]["kept"] = "own/not_measured";
  EXPECT_THROW(finalist_stage_from_json(stray, back), InputError);
  nlohmann::json malformed = doc["problems"][1];
  malformed["finalist_stage"]["finalists"][0].erase("conditions");
  EXPECT_THROW(finalist_stage_from_json(malformed, back), InputError);
}

TEST(SweepReport, TheDocumentsCostSumsItsMeasuredProblemsBesideTheSweepsOwnWallAndSetup) {
  const nlohmann::json cost = sweep_json(two_problems_and_a_resumed_one()).at("cost");
  EXPECT_EQ(cost.at("problems"), 2);
  EXPECT_DOUBLE_EQ(cost.at("problems_wall_s").get<double>(), 1.25 * 3);
  EXPECT_DOUBLE_EQ(cost.at("sample_s").get<double>(), 0.5 * 3);
  EXPECT_EQ(cost.at("pruned"), 28);
  EXPECT_DOUBLE_EQ(cost.at("wall_s").get<double>(), 4.5);
  EXPECT_DOUBLE_EQ(cost.at("setup_s").get<double>(), 0.75);
  EXPECT_FALSE(cost.contains("gpus")) << "one process: no per-GPU shares";

  SweepResult on_two = two_problems_and_a_resumed_one();
  on_two.gpus = {{0, 1, 2.5, 2.25}, {1, 1, 2.0, 1.75}};
  const nlohmann::json gpus = sweep_json(on_two).at("cost").at("gpus");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[1].at("device"), 1);
  EXPECT_DOUBLE_EQ(gpus[0].at("busy_s").get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(gpus[0].at("sweep_s").get<double>(), 2.25);
}

TEST(SweepReport, TheTableEndsWithWhereTheTimeWentAndWhatWasPruned) {
  std::ostringstream out;
  print_sweep_table(two_problems_and_a_resumed_one(), out);
  EXPECT_NE(out.str().find("cost: 2 problems in 3.8 s (1.88 s each)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("40 candidates: 10 sampled to convergence, 28 pruned after their first batch"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("finalist stage at 2 problems (4 challengers timed, 2 out of reach)"), std::string::npos)
      << out.str();
  EXPECT_EQ(cost_summary(SweepResult{}), "");
}

}  // namespace
}  // namespace gemmtune
