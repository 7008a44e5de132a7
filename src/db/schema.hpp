// The db's schema as an ordered list of migrations, and the code that tells a gemmtune file from a foreign one
// and brings it up to date. Kept apart from TuningDb so a test can run the machinery on its own migration list.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "db/sqlite_db.hpp"

namespace gemmtune {

// 'GTUN' in ASCII, stored with PRAGMA application_id: the mark that a SQLite file is a gemmtune db.
inline constexpr std::int32_t kGemmtuneApplicationId = 0x4754554E;

// One step: the SQL that takes a file from version - 1 to version. Steps are applied in order, never edited once
// released: a change to the schema is a new step.
struct SchemaMigration {
  int version;
  std::string_view sql;
};

// gemmtune's schema history; its last version is what this build writes.
const std::vector<SchemaMigration>& schema_migrations();
// The tables every current gemmtune db has; a gemmtune file without one of them is damaged.
const std::vector<std::string_view>& schema_tables();

enum class SchemaState {
  Empty,    // no tables and no application id: a new file, ours to initialize
  Current,  // gemmtune's, at the latest version
  Older,    // gemmtune's, at an earlier version: migrate
  Newer,    // gemmtune's, written by a newer build: refuse
  Foreign   // another application's SQLite file: refuse
};

struct SchemaInfo {
  SchemaState state = SchemaState::Empty;
  std::int32_t application_id = 0;
  int version = 0;  // PRAGMA user_version
};

SchemaInfo inspect_schema(const SqliteDb& db, const std::vector<SchemaMigration>& steps);

// Brings an Empty or Older file to the latest version of steps in one IMMEDIATE transaction: all steps or none.
// It inspects the file again under the write lock, so two processes creating one file at once both end up with
// the one schema. Throws InputError for a Newer or Foreign file.
void migrate_schema(const SqliteDb& db, const std::vector<SchemaMigration>& steps);

}  // namespace gemmtune
