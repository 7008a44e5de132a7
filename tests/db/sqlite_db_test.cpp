#include "db/sqlite_db.hpp"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "support/scratch_dir.hpp"

namespace gemmtune {
namespace {

class SqliteDbTest : public ::testing::Test {
 protected:
  SqliteDbTest() : db(scratch.path("t.db"), SqliteDb::Access::ReadWriteCreate) {
    db.exec("CREATE TABLE t (s TEXT NOT NULL, x REAL NOT NULL)");
  }
  std::int64_t rows() const {
    SqliteStatement count = db.prepare("SELECT count(*) FROM t");
    count.step();
    return count.column_int64(0);
  }
  test::ScratchDir scratch;
  SqliteDb db;
};

TEST_F(SqliteDbTest, BoundStringsWithQuotesAndSqlAreStoredVerbatimNotExecuted) {
  const std::string nasty = "O'Brien \"quoted\"; DROP TABLE t; --";
  db.prepare("INSERT INTO t VALUES (:s, :x)").bind(":s", nasty).bind(":x", 1.5).run();
  SqliteStatement select = db.prepare("SELECT s, x FROM t WHERE s = ?1");
  select.bind(1, nasty);
  ASSERT_TRUE(select.step());
  EXPECT_EQ(select.column_text("s"), nasty);
  EXPECT_EQ(select.column_double("x"), 1.5);
  EXPECT_FALSE(select.step());
}

TEST_F(SqliteDbTest, StatementWithTwoStatementsInItsTextIsRefused) {
  EXPECT_THROW(db.prepare("SELECT 1; SELECT 2"), CheckError);
}

TEST_F(SqliteDbTest, FailedCallThrowsWithSqliteMessageAndTheStatementText) {
  try {
    db.prepare("SELECT * FROM no_such_table");
    FAIL() << "prepare of a missing table did not throw";
  } catch (const SqliteError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no such table: no_such_table"), std::string::npos) << what;
    EXPECT_NE(what.find("SELECT * FROM no_such_table"), std::string::npos) << what;
    EXPECT_NE(what.find("sqlite_db.cpp:"), std::string::npos) << what;
    EXPECT_EQ(e.code(), ExitCode::CheckFailed);
  }
}

TEST_F(SqliteDbTest, NanBindsAsNullSoANotNullColumnRefusesIt) {
  SqliteStatement insert = db.prepare("INSERT INTO t VALUES ('a', ?1)");
  insert.bind(1, std::nan(""));
  EXPECT_THROW(insert.run(), SqliteError);
  EXPECT_EQ(rows(), 0);
}

TEST_F(SqliteDbTest, UnknownParameterOrColumnNameIsAnError) {
  SqliteStatement insert = db.prepare("INSERT INTO t VALUES (:s, :x)");
  EXPECT_THROW(insert.bind(":nope", 1), CheckError);
  SqliteStatement select = db.prepare("SELECT s FROM t");
  EXPECT_THROW(select.column_index("x"), CheckError);
}

TEST_F(SqliteDbTest, TransactionRollsBackUnlessCommitted) {
  {
    SqliteTransaction tx(db);
    db.exec("INSERT INTO t VALUES ('dropped', 1)");
  }
  EXPECT_EQ(rows(), 0);
  {
    SqliteTransaction tx(db);
    db.exec("INSERT INTO t VALUES ('kept', 2)");
    tx.commit();
  }
  EXPECT_EQ(rows(), 1);
}

TEST_F(SqliteDbTest, TransactionRollsBackWhenAnExceptionLeavesItsScope) {
  try {
    SqliteTransaction tx(db);
    db.exec("INSERT INTO t VALUES ('first', 1)");
    db.exec("INSERT INTO t VALUES (NULL, 2)");  // NOT NULL: throws midway
    tx.commit();
  } catch (const SqliteError&) {
  }
  EXPECT_EQ(rows(), 0);
}

TEST(SqliteDbOpen, NonDatabaseFileIsBadInputNotACrash) {
  test::ScratchDir scratch;
  const std::string path = scratch.path("text.db");
  test::write_bytes(path, std::string(4096, 'x'));
  SqliteDb db(path, SqliteDb::Access::ReadWrite);  // SQLite reads the header lazily, on the first statement
  try {
    db.prepare("SELECT count(*) FROM sqlite_master").step();
    FAIL() << "reading a text file as a db did not throw";
  } catch (const SqliteError& e) {
    EXPECT_EQ(e.code(), ExitCode::BadInput);
    EXPECT_EQ(e.sqlite_message(), "file is not a database");
  }
}

TEST(SqliteDbOpen, MissingFileWithoutCreateIsBadInput) {
  test::ScratchDir scratch;
  try {
    SqliteDb db(scratch.path("missing.db"), SqliteDb::Access::ReadWrite);
    FAIL() << "opening a missing file without create did not throw";
  } catch (const SqliteError& e) {
    EXPECT_EQ(e.code(), ExitCode::BadInput);
  }
}

}  // namespace
}  // namespace gemmtune
