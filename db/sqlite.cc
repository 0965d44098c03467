#include "db/sqlite.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace mono::db::sql {

namespace {

// A short form of a statement for error messages.
std::string shorten(std::string_view sql) {
  std::string s;
  for (char c : sql) {
    if (c == '\n' || c == '\t') c = ' ';
    if (c == ' ' && !s.empty() && s.back() == ' ') continue;
    s += c;
    if (s.size() >= 80) {
      s += "...";
      break;
    }
  }
  return s;
}

}  // namespace

absl::Status error(sqlite3* db, int rc, std::string_view what) {
  std::string msg = absl::StrCat("sqlite: ", db ? sqlite3_errmsg(db) : sqlite3_errstr(rc),
                                 " (", sqlite3_errstr(rc), ") in ", std::string(what));
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(msg);
    case SQLITE_CONSTRAINT:
      return absl::FailedPreconditionError(msg);
    default:
      return absl::InternalError(msg);
  }
}

absl::Status exec(sqlite3* db, std::string_view sql) {
  std::string s(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db, s.c_str(), nullptr, nullptr, &err);
  if (err != nullptr) sqlite3_free(err);
  if (rc != SQLITE_OK) return error(db, rc, shorten(sql));
  return absl::OkStatus();
}

absl::StatusOr<Stmt> Stmt::prepare(sqlite3* db, std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    if (stmt != nullptr) sqlite3_finalize(stmt);
    return error(db, rc, absl::StrCat("prepare: ", shorten(sql)));
  }
  return Stmt(db, stmt, sql);
}

Stmt::Stmt(Stmt&& o) noexcept
    : db_(o.db_), stmt_(std::exchange(o.stmt_, nullptr)), sql_(std::move(o.sql_)),
      bind_status_(std::move(o.bind_status_)) {}

Stmt& Stmt::operator=(Stmt&& o) noexcept {
  if (this != &o) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    db_ = o.db_;
    stmt_ = std::exchange(o.stmt_, nullptr);
    sql_ = std::move(o.sql_);
    bind_status_ = std::move(o.bind_status_);
  }
  return *this;
}

Stmt::~Stmt() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

void Stmt::note_bind(int rc) {
  if (rc != SQLITE_OK && bind_status_.ok()) {
    bind_status_ = error(db_, rc, absl::StrCat("bind: ", shorten(sql_)));
  }
}

Stmt& Stmt::bind(int i, int64_t v) {
  note_bind(sqlite3_bind_int64(stmt_, i, v));
  return *this;
}

Stmt& Stmt::bind(int i, double v) {
  note_bind(sqlite3_bind_double(stmt_, i, v));
  return *this;
}

Stmt& Stmt::bind(int i, std::string_view v) {
  note_bind(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  return *this;
}

Stmt& Stmt::bind_null(int i) {
  note_bind(sqlite3_bind_null(stmt_, i));
  return *this;
}

Stmt& Stmt::bind_text_or_null(int i, std::string_view v) {
  return v.empty() ? bind_null(i) : bind(i, v);
}

Stmt& Stmt::bind(int i, const std::optional<double>& v) {
  return v.has_value() ? bind(i, *v) : bind_null(i);
}

absl::StatusOr<bool> Stmt::step() {
  if (!bind_status_.ok()) return bind_status_;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  absl::Status st = error(db_, rc, shorten(sql_));
  sqlite3_reset(stmt_);
  return st;
}

absl::Status Stmt::run() {
  while (true) {
    absl::StatusOr<bool> row = step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
  }
}

void Stmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_status_ = absl::OkStatus();
}

int Stmt::changes() const { return sqlite3_changes(db_); }

bool Stmt::is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

int64_t Stmt::int64(int col) const { return sqlite3_column_int64(stmt_, col); }

double Stmt::real(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Stmt::text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(p),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

std::optional<double> Stmt::opt_real(int col) const {
  if (is_null(col)) return std::nullopt;
  return real(col);
}

absl::StatusOr<int64_t> query_int(sqlite3* db, std::string_view sql) {
  absl::StatusOr<Stmt> st = Stmt::prepare(db, sql);
  if (!st.ok()) return st.status();
  absl::StatusOr<bool> row = st->step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::InternalError(absl::StrCat("no row from: ", shorten(sql)));
  return st->int64(0);
}

}  // namespace mono::db::sql
