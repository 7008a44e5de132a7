#include "db/sqlite_db.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>

#include <sqlite3.h>

namespace gemmtune {
namespace {

ExitCode exit_code_for(int rc) {
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
      return ExitCode::BadInput;
    default:
      return ExitCode::CheckFailed;
  }
}

}  // namespace

SqliteError::SqliteError(int result_code, const std::string& sqlite_message, const std::string& what)
    : Error(exit_code_for(result_code), what), result_code_(result_code), sqlite_message_(sqlite_message) {}

namespace detail {

void check_sqlite(int rc, sqlite3* db, const char* call, const char* file, int line) {
  if (rc != SQLITE_OK) throw_sqlite_error(rc, db, call, file, line);
}

[[noreturn]] void throw_sqlite_error(int rc, sqlite3* db, const std::string& call, const char* file, int line) {
  // The connection's message is more specific than the code's ("no such table: x" vs "SQL logic error"),
  // but only when the connection's last error is this one.
  const std::string message = db != nullptr && sqlite3_errcode(db) == rc ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  std::ostringstream os;
  os << "SQLite error " << rc << " (" << message << "): " << call << " at " << file << ":" << line;
  throw SqliteError(rc, message, os.str());
}

}  // namespace detail

SqliteStatement::SqliteStatement(sqlite3* db, std::string_view sql) : db_(db) {
  const char* tail = nullptr;
  const int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, &tail);
  if (rc != SQLITE_OK) detail::throw_sqlite_error(rc, db, "prepare: " + std::string(sql), __FILE__, __LINE__);
  if (stmt_ == nullptr) throw CheckError("SQLite: no statement in '" + std::string(sql) + "'");
  for (const char* p = tail; p != sql.data() + sql.size(); ++p) {
    if (*p != ' ' && *p != '\n' && *p != '\t' && *p != ';') {
      sqlite3_finalize(stmt_);
      throw CheckError("SQLite: more than one statement in '" + std::string(sql) + "'");
    }
  }
  const int columns = sqlite3_column_count(stmt_);
  for (int c = 0; c < columns; ++c) column_names_.emplace_back(sqlite3_column_name(stmt_, c));
}

SqliteStatement::~SqliteStatement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

SqliteStatement::SqliteStatement(SqliteStatement&& o) noexcept
    : db_(o.db_), stmt_(std::exchange(o.stmt_, nullptr)), column_names_(std::move(o.column_names_)) {}

SqliteStatement& SqliteStatement::bind(int index, std::int64_t value) {
  GT_SQLITE_CALL(db_, sqlite3_bind_int64(stmt_, index, value));
  return *this;
}

SqliteStatement& SqliteStatement::bind(int index, double value) {
  GT_SQLITE_CALL(db_, std::isnan(value) ? sqlite3_bind_null(stmt_, index) : sqlite3_bind_double(stmt_, index, value));
  return *this;
}

SqliteStatement& SqliteStatement::bind(int index, const std::string& value) {
  GT_SQLITE_CALL(db_, sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

SqliteStatement& SqliteStatement::bind(int index, std::nullptr_t) {
  GT_SQLITE_CALL(db_, sqlite3_bind_null(stmt_, index));
  return *this;
}

int SqliteStatement::parameter_index(const char* name) const {
  const int index = sqlite3_bind_parameter_index(stmt_, name);
  if (index == 0) throw CheckError(std::string("SQLite: no parameter '") + name + "' in '" + sql() + "'");
  return index;
}

bool SqliteStatement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  detail::throw_sqlite_error(rc, db_, "step: " + sql(), __FILE__, __LINE__);
}

void SqliteStatement::run() {
  while (step()) {
  }
  reset();
}

void SqliteStatement::reset() { sqlite3_reset(stmt_); }

std::int64_t SqliteStatement::column_int64(int col) const { return sqlite3_column_int64(stmt_, col); }

int SqliteStatement::column_int(int col) const { return sqlite3_column_int(stmt_, col); }

double SqliteStatement::column_double(int col) const { return sqlite3_column_double(stmt_, col); }

std::string SqliteStatement::column_text(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)));
}

int SqliteStatement::column_index(const char* name) const {
  for (std::size_t c = 0; c < column_names_.size(); ++c)
    if (column_names_[c] == name) return static_cast<int>(c);
  throw CheckError(std::string("SQLite: no column '") + name + "' in '" + sql() + "'");
}

std::string SqliteStatement::sql() const {
  const char* text = sqlite3_sql(stmt_);
  return text != nullptr ? text : "";
}

SqliteDb::SqliteDb(const std::string& path, Access access) : path_(path) {
  int flags = SQLITE_OPEN_NOMUTEX;
  switch (access) {
    case Access::ReadOnly: flags |= SQLITE_OPEN_READONLY; break;
    case Access::ReadWrite: flags |= SQLITE_OPEN_READWRITE; break;
    case Access::ReadWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE; break;
  }
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    // sqlite3_open_v2 returns a handle even when it fails; it carries the message and must still be closed.
    const std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw SqliteError(rc, message, "cannot open " + path + ": " + message);
  }
  sqlite3_extended_result_codes(db_, 1);
}

SqliteDb::~SqliteDb() {
  if (db_ != nullptr) sqlite3_close(db_);
}

SqliteDb::SqliteDb(SqliteDb&& o) noexcept : db_(std::exchange(o.db_, nullptr)), path_(std::move(o.path_)) {}

void SqliteDb::exec(std::string_view script) const {
  const char* pos = script.data();
  const char* const end = script.data() + script.size();
  while (pos != end) {
    sqlite3_stmt* raw = nullptr;
    const char* tail = nullptr;
    const int rc = sqlite3_prepare_v2(db_, pos, static_cast<int>(end - pos), &raw, &tail);
    if (rc != SQLITE_OK)
      detail::throw_sqlite_error(rc, db_, "prepare: " + std::string(pos, end), __FILE__, __LINE__);
    if (raw == nullptr) break;  // only whitespace or comments were left
    int step_rc = SQLITE_ROW;
    while (step_rc == SQLITE_ROW) step_rc = sqlite3_step(raw);
    const std::string statement_sql = sqlite3_sql(raw);
    sqlite3_finalize(raw);
    if (step_rc != SQLITE_DONE) detail::throw_sqlite_error(step_rc, db_, "step: " + statement_sql, __FILE__, __LINE__);
    pos = tail;
  }
}

std::int64_t SqliteDb::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

std::int64_t SqliteDb::changes() const { return sqlite3_changes(db_); }

bool has_sqlite_header(const std::string& path) {
  static const char kHeader[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f', 'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
  char head[16] = {};
  std::ifstream in(path, std::ios::binary);
  return in.read(head, sizeof(head)) && std::equal(head, head + sizeof(head), kHeader);
}

SqliteTransaction::SqliteTransaction(const SqliteDb& db, Kind kind) : db_(db) {
  db_.exec(kind == Kind::Write ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
}

SqliteTransaction::~SqliteTransaction() {
  if (!open_) return;
  // Destructors must not throw, so no exec(): a failed ROLLBACK leaves SQLite to roll back when the connection closes.
  sqlite3_stmt* rollback = nullptr;
  if (sqlite3_prepare_v2(db_.get(), "ROLLBACK", -1, &rollback, nullptr) == SQLITE_OK) sqlite3_step(rollback);
  sqlite3_finalize(rollback);
}

void SqliteTransaction::commit() {
  db_.exec("COMMIT");
  open_ = false;
}

}  // namespace gemmtune
