// Versioned schema migrations of the tuning service's database. Each migration runs once,
// in its own transaction, and is recorded in schema_migrations(version, description,
// applied_at). Never edit a migration that has shipped: append a new one.
#pragma once

#include <sqlite3.h>

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/clock.h"

namespace mono::db {

struct Migration {
  int version;              // 1, 2, 3, ... without gaps
  const char* description;  // one line
  const char* sql;          // one or more statements
};

// Every migration this build knows, in order.
const std::vector<Migration>& migrations();

// The version a fully migrated database has.
int latest_schema_version();

// The highest applied version (0 for a new database).
absl::StatusOr<int> schema_version(sqlite3* db);

// Applies the migrations of `list` that the database lacks, in order. A database whose
// schema is newer than the newest of `list` is refused (FailedPrecondition) and left alone.
absl::Status apply_migrations(sqlite3* db, const Clock& clock,
                              const std::vector<Migration>& list = migrations());

}  // namespace mono::db
