#include "db/schema.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/scratch_dir.hpp"

namespace gemmtune {
namespace {

std::int64_t query_int(const SqliteDb& db, const std::string& sql) {
  SqliteStatement s = db.prepare(sql);
  return s.step() ? s.column_int64(0) : -1;
}

bool has_table(const SqliteDb& db, const std::string& name) {
  SqliteStatement s = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
  s.bind(1, name);
  return s.step();
}

const std::vector<SchemaMigration> kV1 = {{1, "CREATE TABLE a (x INTEGER NOT NULL);"}};
const std::vector<SchemaMigration> kV2 = {{1, "CREATE TABLE a (x INTEGER NOT NULL);"},
                                          {2, "ALTER TABLE a ADD COLUMN y INTEGER NOT NULL DEFAULT 7;"
                                              "CREATE TABLE b (z TEXT);"}};

TEST(Schema, EmptyFileIsMigratedToTheLatestVersionAndMarkedAsGemmtunes) {
  test::ScratchDir scratch;
  SqliteDb db(scratch.path("s.db"), SqliteDb::Access::ReadWriteCreate);
  EXPECT_EQ(inspect_schema(db, kV2).state, SchemaState::Empty);
  migrate_schema(db, kV2);
  const SchemaInfo info = inspect_schema(db, kV2);
  EXPECT_EQ(info.state, SchemaState::Current);
  EXPECT_EQ(info.version, 2);
  EXPECT_EQ(info.application_id, kGemmtuneApplicationId);
  EXPECT_TRUE(has_table(db, "a"));
  EXPECT_TRUE(has_table(db, "b"));
}

TEST(Schema, OlderFileIsMigratedStepByStepKeepingItsRows) {
  test::ScratchDir scratch;
  SqliteDb db(scratch.path("s.db"), SqliteDb::Access::ReadWriteCreate);
  migrate_schema(db, kV1);
  db.exec("INSERT INTO a (x) VALUES (42)");
  ASSERT_EQ(inspect_schema(db, kV2).state, SchemaState::Older);

  migrate_schema(db, kV2);
  EXPECT_EQ(inspect_schema(db, kV2).version, 2);
  EXPECT_EQ(query_int(db, "SELECT x FROM a"), 42);
  EXPECT_EQ(query_int(db, "SELECT y FROM a"), 7);
  EXPECT_TRUE(has_table(db, "b"));
}

TEST(Schema, FailingStepLeavesTheFileAtItsOldVersionWithNoStepApplied) {
  test::ScratchDir scratch;
  SqliteDb db(scratch.path("s.db"), SqliteDb::Access::ReadWriteCreate);
  migrate_schema(db, kV1);
  std::vector<SchemaMigration> broken = kV2;
  broken.push_back({3, "CREATE TABLE c (w); THIS IS NOT SQL;"});

  EXPECT_THROW(migrate_schema(db, broken), SqliteError);
  EXPECT_EQ(inspect_schema(db, kV2).version, 1);
  EXPECT_FALSE(has_table(db, "b"));  // step 2 ran before step 3 failed: rolled back with it
  EXPECT_FALSE(has_table(db, "c"));
}

TEST(Schema, FileOfAnotherApplicationIsForeignAndNeverMigrated) {
  test::ScratchDir scratch;
  SqliteDb db(scratch.path("s.db"), SqliteDb::Access::ReadWriteCreate);
  db.exec("CREATE TABLE users (name TEXT)");
  EXPECT_EQ(inspect_schema(db, kV1).state, SchemaState::Foreign);
  EXPECT_THROW(migrate_schema(db, kV1), InputError);
  EXPECT_FALSE(has_table(db, "a"));
}

TEST(Schema, GemmtuneFileOfALaterVersionIsNewer) {
  test::ScratchDir scratch;
  SqliteDb db(scratch.path("s.db"), SqliteDb::Access::ReadWriteCreate);
  migrate_schema(db, kV2);
  EXPECT_EQ(inspect_schema(db, kV1).state, SchemaState::Newer);
  EXPECT_THROW(migrate_schema(db, kV1), InputError);
}

TEST(Schema, GemmtuneSchemaCreatesEveryTableItLists) {
  test::ScratchDir scratch;
  SqliteDb db(scratch.path("s.db"), SqliteDb::Access::ReadWriteCreate);
  migrate_schema(db, schema_migrations());
  for (std::string_view table : schema_tables()) EXPECT_TRUE(has_table(db, std::string(table))) << table;
}

// The shipped migrations: a file written by the first release (v1) gains ncu_metrics.clock_mhz, its rows kept.
TEST(Schema, VersionOneFileGainsTheNcuClockColumnKeepingItsRows) {
  test::ScratchDir scratch;
  SqliteDb db(scratch.path("s.db"), SqliteDb::Access::ReadWriteCreate);
  const std::vector<SchemaMigration> v1(schema_migrations().begin(), schema_migrations().begin() + 1);
  migrate_schema(db, v1);
  db.exec("INSERT INTO ncu_metrics (device_key, problem_key, candidate_id, kernel_name, launch_index, duration_us, "
          "sm_throughput_pct, memory_throughput_pct, dram_throughput_pct, achieved_occupancy_pct, "
          "registers_per_thread, shared_mem_bytes, dram_bytes, l2_hit_rate_pct, top_stalls, cache_control, "
          "report_path, imported_at) VALUES ('d', 'p', 'c', 'k', 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, '[]', 'none', 'r', 't')");
  ASSERT_EQ(inspect_schema(db, schema_migrations()).state, SchemaState::Older);
  migrate_schema(db, schema_migrations());
  EXPECT_EQ(inspect_schema(db, schema_migrations()).state, SchemaState::Current);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM ncu_metrics"), 1);
  EXPECT_EQ(query_int(db, "SELECT CAST(clock_mhz AS INTEGER) FROM ncu_metrics"), -1);
}

}  // namespace
}  // namespace gemmtune
