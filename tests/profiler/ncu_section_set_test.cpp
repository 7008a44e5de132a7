#include "profiler/ncu_section_set.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace gemmtune {
namespace {

const std::string kSetsDir = std::string(GEMMTUNE_SOURCE_DIR) + "/profiles/ncu";

TEST(NcuSectionSet, QuickSetNamesItsFiveSections) {
  const NcuSectionSet s = load_ncu_section_set("quick", kSetsDir);
  EXPECT_EQ(s.name, "quick");
  EXPECT_TRUE(s.ncu_set.empty());
  EXPECT_EQ(s.sections, (std::vector<std::string>{"SpeedOfLight", "MemoryWorkloadAnalysis", "Occupancy",
                                                  "LaunchStats", "WarpStateStats"}));
}

TEST(NcuSectionSet, FullSetIsNcusOwnFullSet) {
  const NcuSectionSet s = load_ncu_section_set("full", kSetsDir);
  EXPECT_EQ(s.ncu_set, "full");
  EXPECT_TRUE(s.sections.empty());
}

TEST(NcuSectionSet, EveryShippedSetParses) {
  const auto names = list_ncu_section_sets(kSetsDir);
  EXPECT_GE(names.size(), 3u);
  for (const std::string& n : names) EXPECT_EQ(load_ncu_section_set(n, kSetsDir).name, n);
}

TEST(NcuSectionSet, UnknownNameSaysWhichSetsExist) {
  try {
    load_ncu_section_set("nosuch", kSetsDir);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("quick"), std::string::npos) << e.what();
  }
}

TEST(NcuSectionSet, NamesAShellOrNcuWouldSplitAreRejected) {
  EXPECT_THROW(parse_ncu_section_set(R"({"name": "x", "sections": ["Speed Of Light"]})", "t"), InputError);
  EXPECT_THROW(parse_ncu_section_set(R"({"name": "x", "sections": ["a;rm -rf /"]})", "t"), InputError);
  EXPECT_THROW(parse_ncu_section_set(R"({"name": "x", "metrics": "dram__bytes.sum"})", "t"), InputError);
  EXPECT_THROW(parse_ncu_section_set(R"({"name": "x", "set": 3})", "t"), InputError);
  EXPECT_THROW(parse_ncu_section_set(R"({"sections": []})", "t"), InputError);
  EXPECT_THROW(load_ncu_section_set("../quick", kSetsDir), InputError);  // a path that does not exist
}

TEST(NcuSectionSet, MalformedJsonIsInputErrorNamingTheFile) {
  try {
    parse_ncu_section_set("{\"name\": ", "profiles/ncu/broken.json");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("profiles/ncu/broken.json"), std::string::npos);
  }
  // A number beyond a double's range is the parser's out_of_range, not its parse_error: bad input all the same.
  EXPECT_THROW(parse_ncu_section_set("{\"name\": 1e999}", "profiles/ncu/huge.json"), InputError);
}

}  // namespace
}  // namespace gemmtune
