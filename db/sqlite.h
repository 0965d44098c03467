// A thin RAII layer over the SQLite C API that turns its error codes into absl::Status.
// Internal to mono_db: callers of the database use Store.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace mono::db::sql {

// The status for a failed SQLite call: BUSY/LOCKED -> Unavailable, CONSTRAINT ->
// FailedPrecondition, anything else -> Internal. `what` names the operation.
absl::Status error(sqlite3* db, int rc, std::string_view what);

// Runs one or more statements that return no rows.
absl::Status exec(sqlite3* db, std::string_view sql);

// One prepared statement. Bind parameters by position (1-based), then step().
class Stmt {
 public:
  static absl::StatusOr<Stmt> prepare(sqlite3* db, std::string_view sql);

  Stmt(Stmt&& other) noexcept;
  Stmt& operator=(Stmt&& other) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt();

  // Binding errors are kept and returned by the next step().
  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Stmt& bind(int i, bool v) { return bind(i, static_cast<int64_t>(v ? 1 : 0)); }
  Stmt& bind(int i, double v);
  Stmt& bind(int i, std::string_view v);
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bind_null(int i);
  // NULL when empty / absent.
  Stmt& bind_text_or_null(int i, std::string_view v);
  Stmt& bind(int i, const std::optional<double>& v);

  // Binds the arguments to parameters 1, 2, ... in order.
  template <typename... Args>
  Stmt& bind_all(const Args&... args) {
    int i = 0;
    (bind(++i, args), ...);
    return *this;
  }

  // Advances one row: true when a row is ready, false when the statement is done.
  absl::StatusOr<bool> step();
  // Steps to the end, ignoring rows.
  absl::Status run();
  // Makes the statement ready to run again with new bindings.
  void reset();
  // Rows changed by the last run (sqlite3_changes).
  int changes() const;

  bool is_null(int col) const;
  int64_t int64(int col) const;
  double real(int col) const;
  std::string text(int col) const;
  std::optional<double> opt_real(int col) const;

 private:
  Stmt(sqlite3* db, sqlite3_stmt* stmt, std::string_view sql) : db_(db), stmt_(stmt), sql_(sql) {}
  void note_bind(int rc);

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
  absl::Status bind_status_;
};

// Runs a query expected to return exactly one row with one integer column.
absl::StatusOr<int64_t> query_int(sqlite3* db, std::string_view sql);

}  // namespace mono::db::sql
