#include "runtime/cache_index.hpp"

#include <cmath>
#include <filesystem>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "db/tuning_db.hpp"
#include "support/scratch_dir.hpp"
#include "support/tuning_fixtures.hpp"

namespace gemmtune::runtime {
namespace {

using test::test_entry;
using test::test_problem;

const std::string kHere = test::test_device("NVIDIA Here").key();
const std::string kThere = test::test_device("NVIDIA Elsewhere").key();

TEST(LogShapeDistance, IsScaleFreeAndSymmetric) {
  EXPECT_DOUBLE_EQ(log_shape_distance(test_problem(64, 64, 64), test_problem(64, 64, 64)), 0.0);
  // 2x in one dimension is ln 2 whether the shapes are small or large.
  EXPECT_NEAR(log_shape_distance(test_problem(128, 64, 64), test_problem(64, 64, 64)), std::log(2.0), 1e-12);
  EXPECT_NEAR(log_shape_distance(test_problem(4096, 2048, 2048), test_problem(2048, 2048, 2048)), std::log(2.0), 1e-12);
  EXPECT_NEAR(log_shape_distance(test_problem(64, 64, 64), test_problem(128, 128, 128)), std::sqrt(3.0) * std::log(2.0),
              1e-12);
  EXPECT_DOUBLE_EQ(log_shape_distance(test_problem(100, 7, 3), test_problem(5, 900, 40)),
                   log_shape_distance(test_problem(5, 900, 40), test_problem(100, 7, 3)));
}

TEST(CacheIndex, FindsTheExactProblemAndNothingForAnotherEpilogue) {
  const GemmProblem p = test_problem(256, 256, 256);
  const CacheIndex index({test_entry(kHere, p, 11, 9.5)}, kHere);
  ASSERT_NE(index.exact(p), nullptr);
  EXPECT_EQ(index.exact(p)->candidate.lt.algo_id, 11);
  GemmProblem other = p;
  other.epi.act = Activation::Relu;
  EXPECT_EQ(index.exact(other), nullptr);
}

TEST(CacheIndex, NeighborsAreOfTheSameKindOnlyNearestFirstWithoutTheProblemItself) {
  const GemmProblem p = test_problem(1000, 1000, 1000);
  GemmProblem fp32 = test_problem(1024, 1024, 1024, MathMode::Fp32);  // another mode: another kind
  GemmProblem tn = test_problem(1000, 1000, 1000);                     // another layout: another kind
  tn.trans_a = true;
  const CacheIndex index({test_entry(kHere, test_problem(4096, 4096, 4096), 1, 300),
                          test_entry(kHere, test_problem(1024, 1024, 1024), 2, 16),
                          test_entry(kHere, p, 3, 15), test_entry(kHere, test_problem(512, 512, 512), 4, 9),
                          test_entry(kHere, fp32, 5, 60), test_entry(kHere, tn, 6, 17)},
                         kHere);
  const std::vector<Neighbor> n = index.neighbors(p);
  ASSERT_EQ(n.size(), 3u);
  EXPECT_EQ(n[0].entry->candidate.lt.algo_id, 2);
  EXPECT_EQ(n[1].entry->candidate.lt.algo_id, 4);
  EXPECT_EQ(n[2].entry->candidate.lt.algo_id, 1);
  EXPECT_LT(n[0].distance, n[1].distance);
  EXPECT_LT(n[1].distance, n[2].distance);
}

TEST(CacheIndex, IgnoresOtherDeviceKeysAndSaysHowManyOnOneLine) {
  const GemmProblem p = test_problem(256, 256, 256);
  const CacheIndex index({test_entry(kThere, p, 1, 5), test_entry(kThere, test_problem(512, 512, 512), 2, 7),
                          test_entry(kHere, test_problem(128, 128, 128), 3, 4)},
                         kHere);
  EXPECT_EQ(index.size(), 1u);
  EXPECT_EQ(index.exact(p), nullptr) << "another device's entry must never be used";
  EXPECT_TRUE(index.neighbors(p).size() == 1 && index.neighbors(p)[0].entry->device_key == kHere);
  EXPECT_EQ(index.foreign_count(), 2u);
  const std::string w = index.foreign_warning();
  EXPECT_EQ(w.find('\n'), std::string::npos) << w;
  EXPECT_NE(w.find("ignoring 2 cache entries"), std::string::npos) << w;
  EXPECT_NE(w.find(kThere), std::string::npos) << w;
  EXPECT_NE(w.find(kHere), std::string::npos) << w;
  EXPECT_NE(w.find("another GPU, driver or cuBLASLt"), std::string::npos) << w;
}

TEST(CacheIndex, NoWarningWhenEveryEntryIsThisDevices) {
  const CacheIndex index({test_entry(kHere, test_problem(64, 64, 64), 1, 5)}, kHere);
  EXPECT_EQ(index.foreign_warning(), "");
}

TEST(LoadCache, AMissingDbIsAnEmptyCacheNotAnError) {
  const test::ScratchDir dir;
  const LoadedCache c = load_cache(dir.path("absent.db"), kHere);
  EXPECT_FALSE(c.db_found);
  EXPECT_EQ(c.index.size(), 0u);
  EXPECT_FALSE(std::filesystem::exists(dir.path("absent.db"))) << "loading must not create the db";
}

TEST(LoadCache, ReadsTheEntriesOfThisDeviceFromADbTheTestBuilt) {
  const test::ScratchDir dir;
  const std::string path = dir.path("t.db");
  TuningDb(path).merge_cache_entries({test_entry(kHere, test_problem(64, 64, 64), 1, 5),
                                      test_entry(kThere, test_problem(64, 64, 64), 2, 4)});
  const LoadedCache c = load_cache(path, kHere);
  EXPECT_TRUE(c.db_found);
  EXPECT_EQ(c.index.size(), 1u);
  EXPECT_EQ(c.index.foreign_count(), 1u);
  ASSERT_NE(c.index.exact(test_problem(64, 64, 64)), nullptr);
  EXPECT_EQ(c.index.exact(test_problem(64, 64, 64))->candidate.lt.algo_id, 1);
}

TEST(LoadCache, CarriesTheOwnVariantSpeedsOfThisDeviceMeasuredAtTheKindsOtherShapes) {
  const test::ScratchDir dir;
  const std::string path = dir.path("t.db");
  const GemmProblem near = test_problem(1024, 1024, 1024), far = test_problem(4096, 4096, 4096);
  const GemmProblem other_kind = test_problem(1024, 1024, 1024, MathMode::Fp32);
  {
    TuningDb db(path);
    const std::int64_t run = db.begin_run(test::test_run(test::test_device("NVIDIA Here")));
    for (const GemmProblem& p : {far, near, other_kind})
      db.store_problem(run, p, {test::lt_record(p, 5, 100.0), test::own_record(p, "tf32_a", 80.0)});
  }
  LoadedCache c = load_cache(path, kHere);
  EXPECT_TRUE(c.index.measured_neighbors(near).empty()) << "read at the first untuned problem, not at load";
  read_measurements(c);
  read_measurements(c);
  const std::vector<MeasuredNeighbor> measured = c.index.measured_neighbors(test_problem(1000, 1000, 1000));
  ASSERT_EQ(measured.size(), 2u) << "the fp32 shape is another kind; a second read adds nothing";
  EXPECT_EQ(measured[0].shape->problem, near);
  EXPECT_EQ(measured[1].shape->problem, far);
  ASSERT_EQ(measured[0].shape->variants.size(), 1u);
  EXPECT_DOUBLE_EQ(measured[0].shape->variants[0].speedup, 1.25);
  EXPECT_EQ(c.index.measured_neighbors(near).size(), 1u) << "a shape is not its own neighbour";
  LoadedCache there = load_cache(path, kThere);
  read_measurements(there);
  EXPECT_TRUE(there.index.measured_neighbors(near).empty()) << "another device's measurements";
}

TEST(LoadCache, MeasurementsAreReadFromTheDbAsLoadedEvenIfItsFileWasReplacedSince) {
  const test::ScratchDir dir;
  const std::string path = dir.path("t.db");
  const GemmProblem tuned = test_problem(1024, 1024, 1024);
  {
    TuningDb db(path);
    const std::int64_t run = db.begin_run(test::test_run(test::test_device("NVIDIA Here")));
    db.store_problem(run, tuned, {test::lt_record(tuned, 5, 100.0), test::own_record(tuned, "tf32_a", 80.0)});
  }
  LoadedCache c = load_cache(path, kHere);
  std::filesystem::rename(path, dir.path("moved.db"));
  test::write_bytes(path, "not a db");
  read_measurements(c);
  EXPECT_EQ(c.index.measured_neighbors(test_problem(1000, 1000, 1000)).size(), 1u);
}

TEST(LoadCache, ACorruptDbIsAnInputErrorAndIsLeftAsItWas) {
  const test::ScratchDir dir;
  const std::string path = dir.path("corrupt.db");
  const std::string bytes = "SQLite format 3" + std::string(1, '\0') + std::string(4000, 'x');
  test::write_bytes(path, bytes);
  EXPECT_THROW(load_cache(path, kHere), InputError);
  EXPECT_EQ(test::read_bytes(path), bytes);
}

}  // namespace
}  // namespace gemmtune::runtime
