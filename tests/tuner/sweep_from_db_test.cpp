// A sweep result rebuilt from a db holds, per problem, the measurements of the run that completed it last.
#include "tuner/sweep_from_db.hpp"

#include <gtest/gtest.h>

#include "support/scratch_dir.hpp"
#include "support/tuning_fixtures.hpp"

namespace gemmtune {
namespace {

TEST(SweepFromDb, EachProblemHasTheRecordsOfItsLatestRun) {
  test::ScratchDir scratch;
  TuningDb db(scratch.path("t.db"));
  const DeviceIdentity device = test::test_device();
  const GemmProblem a = test::test_problem(512, 512, 512), b = test::test_problem(256, 256, 256);
  const std::int64_t first = db.begin_run(test::test_run(device, "ci"));
  db.store_problem(first, a, {test::lt_record(a, 1, 30.0)});
  db.store_problem(first, b, {test::lt_record(b, 1, 10.0), test::lt_record(b, 2, 9.0, MeasureStatus::VerifyFailed)});
  const std::int64_t second = db.begin_run(test::test_run(device, "ci"));
  db.store_problem(second, a, {test::lt_record(a, 1, 31.0), test::own_record(a, "v", 25.0)});

  const SweepResult r = sweep_result_from_db(db, device.key());
  EXPECT_EQ(r.run.id, second);
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_EQ(r.problems[0].problem.key(), b.key());  // in the order they were stored: b's records are older
  EXPECT_EQ(r.problems[0].records.size(), 2u);
  EXPECT_EQ(r.problems[1].problem.key(), a.key());
  ASSERT_EQ(r.problems[1].records.size(), 2u);
  EXPECT_EQ(r.problems[1].records[0].stats.median_us, 31.0);
  EXPECT_EQ(r.verify_failures, 1);
  EXPECT_THROW(sweep_result_from_db(db, "no such device"), InputError);
}

}  // namespace
}  // namespace gemmtune
