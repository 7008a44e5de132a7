// The finalist stage on the GPU: a sweep re-times its finalists in the conditions its profile names and stores the
// margin over heuristic-first with every cache entry, by the keep rule.
#include "tuner/program_timing.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cuda/device_info.hpp"
#include "db/tuning_db.hpp"
#include "support/gpu_test.hpp"
#include "support/run_gemmtune.hpp"
#include "support/scratch_dir.hpp"

namespace gemmtune {
namespace {

TEST(ProgramConditions, FollowTheProfileStreamBeforeGraphWarmBeforeCold) {
  TimingSettings t;
  std::vector<std::string> names;
  for (const ProgramCondition& c : program_conditions(t)) names.push_back(c.name());
  EXPECT_EQ(names, (std::vector<std::string>{"stream/warm", "stream/cold", "graph/warm", "graph/cold"}));
  t.launch_stream = false;
  t.l2_warm = false;
  ASSERT_EQ(program_conditions(t).size(), 1u);
  EXPECT_EQ(program_conditions(t)[0].name(), "graph/cold");
}

TEST(ProgramBatching, TwentyCallsForShortCallsFewerNearAMillisecondAndBoundedRepeats) {
  EXPECT_EQ(program_batching(10, 4, 4).calls, 20);
  EXPECT_EQ(program_batching(10, 4, 4).repeats, 9);
  EXPECT_EQ(program_batching(2000, 4, 4).calls, 4);
  EXPECT_EQ(program_batching(2000, 4, 4).repeats, 3);
}

TEST(WarmInputSet, WarmRepeatsTakeTurnsOnThreeAllocationsSoNoOneAllocationDecides) {
  EXPECT_EQ(warm_placements(1), 1);  // a set over 2x L2: only one allocation exists
  EXPECT_EQ(warm_placements(2), 2);
  EXPECT_EQ(warm_placements(64), kWarmPlacements);
  std::vector<int> sets;
  for (int r = 0; r < 7; ++r) sets.push_back(warm_input_set(r, 64));
  EXPECT_EQ(sets, (std::vector<int>{0, 1, 2, 0, 1, 2, 0}));
  for (int r = 0; r < 7; ++r) EXPECT_EQ(warm_input_set(r, 1), 0);
  // The fewest repeats a stage runs still reach every allocation.
  EXPECT_GE(program_batching(1e6, 4, 8).repeats, kWarmPlacements);
}

void expect_margins_follow_the_keep_rule(const std::string& db_path, const std::string& conditions) {
  const std::string device_key = query_device(0).identity.key();
  const TuningDb db(db_path, TuningDb::Access::ReadOnly);
  const std::vector<CacheEntry> entries = db.cache_entries();
  ASSERT_FALSE(entries.empty());
  for (const CacheEntry& e : entries) {
    SCOPED_TRACE(e.problem.key() + " " + e.candidate.id());
    ASSERT_TRUE(e.evidence.known());
    EXPECT_EQ(e.evidence.condition_names(), conditions);
    // The no-entry set's members: heuristic-first, the plain GEMM + our epilogue kernel (bias+gelu has cuBLASLt's
    // fused form), the heuristic's first algo at a framework's smaller workspace (each of heuristic rank 0) and
    // cuBLAS's own choice. Heuristic-first is kept with margin 1 in every condition.
    const bool member = (e.candidate.backend == Backend::Lt && e.candidate.heuristic_rank == 0) ||
                        e.candidate.backend == Backend::Blas;
    bool margin_one = true;
    for (const ConditionMargin& c : e.evidence.conditions) margin_one = margin_one && c.margin == 1.0;
    if (member && margin_one) {
      EXPECT_TRUE(e.candidate.backend == Backend::Lt && !e.candidate.lt_epilogue_kernel);
    } else if (member) {
      // Kept as the member that loses least (choose_over_no_entry): its worst margin over heuristic-first beats
      // heuristic-first's worst margin over it, 1 / (its best), so min · max > 1, though one condition may sit just
      // under 1.
      double lowest = e.evidence.conditions.front().margin, highest = lowest;
      for (const ConditionMargin& c : e.evidence.conditions) {
        lowest = std::min(lowest, c.margin);
        highest = std::max(highest, c.margin);
      }
      EXPECT_GT(lowest * highest, 1.0);
    } else {
      // The db keeps 4 decimals; 1e-9 absorbs only the double rounding of that text, not a real shortfall.
      EXPECT_GE(e.evidence.min_margin(), 1.0 + kMinProgramNoise - 1e-9);
      EXPECT_GE(e.evidence.min_excess(), -1e-9);
    }
  }
}

TEST(FinalistStageGpu, ASweepStoresEachEntrysMarginInEveryConditionItsProfileNames) {
  GT_REQUIRE_GPU();
  test::ScratchDir dir;
  test::write_bytes(dir.path("both.json"), R"({
    "name": "finalists", "shapes": [[256, 512, 128], [384, 1536, 768]], "epilogues": ["bias+gelu"],
    "modes": ["tf32", "fp32"], "backends": ["own", "lt"], "lt": {"top_k": 4},
    "timing": {"min_samples": 10, "min_time_ms": 1, "max_time_ms": 20, "max_noise_pct": 2}})");
  auto r = test::run_gemmtune(
      {"sweep", "--profile", dir.path("both.json"), "--db", dir.path("both.db"), "--json", dir.path("both.out.json")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_margins_follow_the_keep_rule(dir.path("both.db"), "stream/warm,stream/cold,graph/warm,graph/cold");
  // The --json document shows the stage: what it kept (the db's entry) and every finalist's time in each condition.
  const nlohmann::json doc = nlohmann::json::parse(test::read_bytes(dir.path("both.out.json")));
  const TuningDb db(dir.path("both.db"));
  int staged = 0;
  for (const nlohmann::json& p : doc.at("problems")) {
    if (!p.contains("finalist_stage")) continue;
    ++staged;
    const nlohmann::json& stage = p["finalist_stage"];
    const std::string key = p.at("problem_key").get<std::string>();
    const std::optional<CacheEntry> e = db.cached(query_device(0).identity.key(), key);
    ASSERT_TRUE(e.has_value()) << key;
    EXPECT_EQ(stage.at("kept"), e->candidate.id()) << key;
    for (const nlohmann::json& f : stage.at("finalists")) {
      EXPECT_EQ(f.at("conditions").size(), 4u) << key;
      for (const nlohmann::json& c : f.at("conditions")) EXPECT_GT(c.at("median_us").get<double>(), 0) << key;
    }
    if (!stage.at("finalists").empty()) {
      EXPECT_EQ(stage["finalists"][0].at("role"), "heuristic_first") << key;
    }
  }
  EXPECT_EQ(staged, 4) << "two shapes in two modes, each with a heuristic-first";
  r = test::run_gemmtune({"cache", "show", "--db", dir.path("both.db")});
  EXPECT_NE(r.output.find("(stream/warm,stream/cold,graph/warm,graph/cold)"), std::string::npos) << r.output;

  test::write_bytes(dir.path("graph.json"), R"({
    "name": "graph-warm", "shapes": [[256, 512, 128]], "epilogues": ["none"], "modes": ["tf32"],
    "backends": ["own", "lt"], "lt": {"top_k": 4},
    "timing": {"min_samples": 10, "min_time_ms": 1, "max_time_ms": 20, "launch": "graph", "l2": "warm"}})");
  r = test::run_gemmtune({"sweep", "--profile", dir.path("graph.json"), "--db", dir.path("graph.db")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_margins_follow_the_keep_rule(dir.path("graph.db"), "graph/warm");
}

}  // namespace
}  // namespace gemmtune
