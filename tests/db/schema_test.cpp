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

}  // namespace
}  // namespace gemmtune
