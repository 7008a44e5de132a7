// RAII owners of a SQLite connection, its prepared statements and its transactions, and the one check that turns
// a failed SQLite call into a gemmtune error. The header only forward-declares SQLite's types, so code that uses
// the db (the sweep, the runtime) does not need sqlite3.h on its include path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace gemmtune {

// A failed SQLite call. Its exit code says whose fault it is: a file that is not a database, or is damaged, is bad
// input (2); anything else (locked past the busy timeout, a violated constraint) is a failed check (1).
class SqliteError : public Error {
 public:
  SqliteError(int result_code, const std::string& sqlite_message, const std::string& what);
  int result_code() const { return result_code_; }
  // SQLite's own words, e.g. "file is not a database".
  const std::string& sqlite_message() const { return sqlite_message_; }

 private:
  int result_code_;
  std::string sqlite_message_;
};

namespace detail {
// Throws SqliteError unless rc is SQLITE_OK: "SQLite error <rc> (<errmsg>): <call> at <file>:<line>".
void check_sqlite(int rc, sqlite3* db, const char* call, const char* file, int line);
[[noreturn]] void throw_sqlite_error(int rc, sqlite3* db, const std::string& call, const char* file, int line);
}  // namespace detail

// Runs a SQLite call that returns a result code and throws SqliteError with its text, file and line.
#define GT_SQLITE_CALL(db, expr) ::gemmtune::detail::check_sqlite((expr), (db), #expr, __FILE__, __LINE__)

// One prepared statement. Parameters bind by 1-based index or by name (":name"); columns read by 0-based index
// or by name. Values only ever enter SQL through bind(), never through the SQL text.
class SqliteStatement {
 public:
  // Prepares exactly one statement; trailing SQL after it is a programming error and throws.
  SqliteStatement(sqlite3* db, std::string_view sql);
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  SqliteStatement(SqliteStatement&& o) noexcept;
  SqliteStatement& operator=(SqliteStatement&&) = delete;

  SqliteStatement& bind(int index, std::int64_t value);
  SqliteStatement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  // NaN binds as NULL (SQLite has no NaN), so a NOT NULL column refuses it.
  SqliteStatement& bind(int index, double value);
  SqliteStatement& bind(int index, const std::string& value);
  SqliteStatement& bind(int index, std::nullptr_t);
  template <class T>
  SqliteStatement& bind(const char* name, const T& value) {
    return bind(parameter_index(name), value);
  }
  int parameter_index(const char* name) const;

  // Advances to the next row: true while there is one, false once the statement is done.
  bool step();
  // Steps a statement that returns no rows (INSERT, UPDATE, DDL) to completion, then resets it for reuse.
  void run();
  // Makes the statement reusable; its bindings stay.
  void reset();

  std::int64_t column_int64(int col) const;
  int column_int(int col) const;
  double column_double(int col) const;
  std::string column_text(int col) const;
  int column_index(const char* name) const;
  std::int64_t column_int64(const char* name) const { return column_int64(column_index(name)); }
  int column_int(const char* name) const { return column_int(column_index(name)); }
  double column_double(const char* name) const { return column_double(column_index(name)); }
  std::string column_text(const char* name) const { return column_text(column_index(name)); }

  std::string sql() const;

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::vector<std::string> column_names_;
};

// One connection. Not shared between threads: each thread or process opens its own.
class SqliteDb {
 public:
  enum class Access { ReadOnly, ReadWrite, ReadWriteCreate };
  SqliteDb(const std::string& path, Access access);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;
  SqliteDb(SqliteDb&& o) noexcept;
  SqliteDb& operator=(SqliteDb&&) = delete;

  sqlite3* get() const { return db_; }
  const std::string& path() const { return path_; }
  SqliteStatement prepare(std::string_view sql) const { return SqliteStatement(db_, sql); }
  // Prepares and runs each statement of a parameterless script in turn (schema migrations, pragmas).
  void exec(std::string_view script) const;
  std::int64_t last_insert_rowid() const;
  // Rows changed by the last INSERT, UPDATE or DELETE.
  std::int64_t changes() const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

// True when path starts with SQLite's 16-byte file header: how merge tells a db from a JSON export by content.
bool has_sqlite_header(const std::string& path);

// BEGIN on construction, ROLLBACK on destruction unless commit() ran.
// Write (BEGIN IMMEDIATE) takes the write lock up front, so a second writer waits in BEGIN (under the busy timeout)
// instead of failing with SQLITE_BUSY when a read transaction later tries to upgrade to a write.
// Read (BEGIN DEFERRED, no writes) makes several SELECTs see one snapshot of the file.
class SqliteTransaction {
 public:
  enum class Kind { Write, Read };
  explicit SqliteTransaction(const SqliteDb& db, Kind kind = Kind::Write);
  ~SqliteTransaction();
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;

  void commit();

 private:
  const SqliteDb& db_;
  bool open_ = true;
};

}  // namespace gemmtune
