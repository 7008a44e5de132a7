#include "profile/sweep_profile.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace gemmtune {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_sweep_profile(text, "test.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(SweepProfile, ExpandsShapesTimesLayoutsEpiloguesAndModes) {
  const SweepProfile p = parse_sweep_profile(R"({
    "name": "t", "shapes": [[256, 512, 128], {"m": 7, "n": 9, "k": 11, "label": "odd"}],
    "layouts": ["nn", "tt"], "epilogues": ["none", "bias+gelu+z"], "modes": ["tf32", "fp32"],
    "lt": {"top_k": 3}, "timing": {"min_samples": 7}})",
                                             "t.json");
  EXPECT_EQ(p.problems.size(), 2u * 2u * 2u * 2u);
  EXPECT_EQ(p.problems.front().key(), "fwd:256x512x128:nn:row:none:tf32");
  EXPECT_EQ(p.problems.back().key(), "fwd:7x9x11:tt:row:bias+gelu+z:fp32");
  EXPECT_EQ(p.lt.top_k, 3);
  EXPECT_EQ(p.timing.min_samples, 7);
}

TEST(SweepProfile, TheFinalistStageMeasuresBothLaunchesAndBothL2StatesUnlessTold) {
  const SweepProfile all = parse_sweep_profile(R"({"name": "a", "shapes": [[1, 2, 3]]})", "a.json");
  EXPECT_TRUE(all.timing.launch_stream && all.timing.launch_graph && all.timing.l2_warm && all.timing.l2_cold);
  EXPECT_EQ(all.timing.finalists, 3);
  const SweepProfile some = parse_sweep_profile(
      R"({"name": "s", "shapes": [[1, 2, 3]], "timing": {"launch": "graph", "l2": "cold", "finalists": 0}})", "s.json");
  EXPECT_FALSE(some.timing.launch_stream);
  EXPECT_TRUE(some.timing.launch_graph);
  EXPECT_FALSE(some.timing.l2_warm);
  EXPECT_TRUE(some.timing.l2_cold);
  EXPECT_EQ(some.timing.finalists, 0);
  EXPECT_NE(error_of(R"({"name": "x", "shapes": [[1, 2, 3]], "timing": {"launch": "eager"}})")
                .find("field 'timing.launch': must be \"stream\", \"graph\" or \"both\", not \"eager\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"name": "x", "shapes": [[1, 2, 3]], "timing": {"l2": true}})").find("timing.l2"),
            std::string::npos);
}

TEST(SweepProfile, GridIsTheCartesianProduct) {
  const SweepProfile p =
      parse_sweep_profile(R"({"name": "g", "grid": {"m": [1, 2], "n": [3, 4, 5], "k": [6]}})", "g.json");
  EXPECT_EQ(p.problems.size(), 6u);
}

TEST(SweepProfile, ErrorsNameTheFileAndTheField) {
  EXPECT_NE(error_of(R"({"name": "x", "shapes": [[1, 2, 3]], "modes": ["tf32", "fp16"]})").find("modes[1]"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"name": "x", "shapes": [[1, -2, 3]]})").find("shapes[0][1]"), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "x", "shapes": [[1, 2, 3]], "epilogues": ["bias+swish"]})").find("epilogues[0]"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"name": "x", "shapes": [[1, 2, 3]], "lt": {"top_k": 0}})").find("lt.top_k"), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "x", "shapes": [[1, 2, 3]], "shapez": 1})").find("'shapez'"), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "x"})").find("shapes"), std::string::npos);
  EXPECT_NE(error_of("{not json").find("test.json"), std::string::npos);
}

// A grid of 100 values per dimension is a million shapes: refused before any of them is planned, so a mistyped
// profile costs an error message, not minutes and gigabytes.
TEST(SweepProfile, PlansBeyondAHundredThousandProblemsAreRefusedUpFront) {
  std::string values;
  for (int i = 1; i <= 100; ++i) values += (i > 1 ? "," : "") + std::to_string(i);
  const std::string grid = R"({"name": "x", "grid": {"m": [)" + values + R"(], "n": [)" + values + R"(], "k": [)" + values + "]}}";
  EXPECT_NE(error_of(grid).find("'grid': has 1000000 shapes"), std::string::npos) << error_of(grid);
  const std::string product = R"({"name": "x", "grid": {"m": [)" + values + R"(], "n": [)" + values +
                              R"(], "k": [1, 2, 3]}, "layouts": ["nn", "nt", "tn", "tt"], "outputs": ["row", "col"]})";
  EXPECT_NE(error_of(product).find("expands to 240000 problems"), std::string::npos) << error_of(product);
}

// Found by fuzz_profile (tests/fuzz/regressions/fuzz_profile/number_beyond_double_range): a number beyond a
// double's range threw the JSON parser's out_of_range past the profile reader (exit 1, not 2).
TEST(SweepProfile, ANumberBeyondADoublesRangeIsAnInputError) {
  EXPECT_NE(error_of(R"({"name": "x", "shapes": [[1, 2, 3]], "timing": {"min_time_ms": 1e999}})").find("not valid JSON"),
            std::string::npos);
}

// Found by fuzz_profile (tests/fuzz/regressions/fuzz_profile/description_not_a_string): a description that was
// not a string threw the JSON library's type_error past the profile reader (exit 1, not 2).
TEST(SweepProfile, ADescriptionThatIsNotAStringIsAnInputError) {
  EXPECT_NE(error_of(R"({"name": "x", "description": 1, "shapes": [[1, 2, 3]]})").find("'description'"),
            std::string::npos);
  EXPECT_EQ(parse_sweep_profile(R"({"name": "x", "description": "d", "shapes": [[1, 2, 3]]})", "t").description, "d");
}

TEST(SweepProfile, CheckedInProfilesAllParse) {
  for (const char* name :
       {"quick", "ci", "default", "full", "kernels", "dev_3xtf32", "runtime_bench_fp32_equivalent", "decode_heads"}) {
    const SweepProfile p = load_sweep_profile(name, std::string(GEMMTUNE_SOURCE_DIR) + "/profiles");
    EXPECT_EQ(p.name, name);
    EXPECT_FALSE(p.problems.empty()) << name;
  }
}

TEST(SweepProfile, Fp32EquivalentIsOffUnlessTheProfileTurnsItOnWithABoolean) {
  EXPECT_FALSE(parse_sweep_profile(R"({"name": "x", "shapes": [[1, 2, 3]]})", "x.json").fp32_equivalent);
  EXPECT_TRUE(parse_sweep_profile(R"({"name": "x", "shapes": [[1, 2, 3]], "fp32_equivalent": true})", "x.json")
                  .fp32_equivalent);
  EXPECT_NE(error_of(R"({"name": "x", "shapes": [[1, 2, 3]], "fp32_equivalent": "yes"})").find("fp32_equivalent"),
            std::string::npos);
}

TEST(SweepProfile, PruningIsOnUnlessTheProfileTurnsItOffAndTheComparedProfilesDo) {
  EXPECT_TRUE(parse_sweep_profile(R"({"name": "x", "shapes": [[1, 2, 3]]})", "x.json").timing.prune);
  EXPECT_FALSE(parse_sweep_profile(R"({"name": "x", "shapes": [[1, 2, 3]], "timing": {"prune": false}})", "x.json")
                   .timing.prune);
  EXPECT_NE(error_of(R"({"name": "x", "shapes": [[1, 2, 3]], "timing": {"prune": 0}})").find("timing.prune"),
            std::string::npos);
  // The gate compares every candidate of ci with its baseline, and the kernel benchmarks compare candidates side by
  // side: their numbers must all come from sampling to convergence.
  for (const char* name : {"ci", "kernels", "dev_3xtf32", "dev_tf32", "dev_fp32"})
    EXPECT_FALSE(load_sweep_profile(name, std::string(GEMMTUNE_SOURCE_DIR) + "/profiles").timing.prune) << name;
  EXPECT_TRUE(load_sweep_profile("default", std::string(GEMMTUNE_SOURCE_DIR) + "/profiles").timing.prune);
}

TEST(SweepProfile, MissingFileIsAnInputError) {
  EXPECT_THROW(load_sweep_profile("no-such-profile", std::string(GEMMTUNE_SOURCE_DIR) + "/profiles"), InputError);
}

}  // namespace
}  // namespace gemmtune

namespace gemmtune {
namespace {

TEST(SweepProfile, BackwardPassesAreOneProblemPerShapeWhateverTheEpilogue) {
  const SweepProfile p = parse_sweep_profile(R"({
    "name": "b", "shapes": [[256, 512, 128]], "epilogues": ["none", "bias+gelu"], "passes": ["fwd", "bwd_a", "bwd_b"]})",
                                             "b.json");
  ASSERT_EQ(p.problems.size(), 4u);  // two forward epilogues, one gA and one gB GEMM
  EXPECT_EQ(p.problems[1].key(), "bwd_a:256x512x128:nn:row:none:tf32");
  EXPECT_EQ(p.problems[2].key(), "bwd_b:256x512x128:nn:row:none:tf32");
  EXPECT_EQ(p.problems[3].key(), "fwd:256x512x128:nn:row:bias+gelu:tf32");
}

TEST(SweepProfile, UnknownPassNamesTheField) {
  EXPECT_THROW(parse_sweep_profile(R"({"name": "b", "shapes": [[1, 2, 3]], "passes": ["fwd", "sideways"]})", "b.json"),
               InputError);
}

}  // namespace
}  // namespace gemmtune
