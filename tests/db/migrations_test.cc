// Schema migrations: applied once, recorded, re-opening applies nothing, a newer schema is
// refused, WAL on a file database.
#include <sqlite3.h>
#include <stdio.h>

#include <string>
#include <vector>

#include "db/migrations.h"
#include "db/store.h"
#include "tests/db/db_test_util.h"

namespace mono::db::testing {
namespace {

// Runs one integer query on a raw connection.
int64_t query(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  int64_t v = -1;
  if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

void exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

TEST(Migrations, ListIsOrderedFromOne) {
  const std::vector<Migration>& list = migrations();
  ASSERT_FALSE(list.empty());
  for (size_t i = 0; i < list.size(); ++i) {
    EXPECT_EQ(list[i].version, static_cast<int>(i) + 1);
    EXPECT_NE(std::string(list[i].description), "");
  }
  EXPECT_EQ(latest_schema_version(), list.back().version);
}

TEST(Migrations, AppliedOnceAndReopenCleanly) {
  TempDir dir;
  const std::string path = dir.file("tuning.db");
  FakeClock clock(1000);
  {
    auto store = open_or_die(path, &clock);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(*store->schema_version(), latest_schema_version());
  }
  EXPECT_EQ(query(path, "SELECT COUNT(*) FROM schema_migrations"), latest_schema_version());
  EXPECT_EQ(query(path, "SELECT applied_at FROM schema_migrations WHERE version = 1"), 1000);

  clock.set(5000);
  {
    auto store = open_or_die(path, &clock);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(*store->schema_version(), latest_schema_version());
  }
  // Nothing applied again: same rows, the original time.
  EXPECT_EQ(query(path, "SELECT COUNT(*) FROM schema_migrations"), latest_schema_version());
  EXPECT_EQ(query(path, "SELECT applied_at FROM schema_migrations WHERE version = 1"), 1000);
  for (const char* table : {"workers", "submissions", "tasks", "submission_tasks", "jobs",
                            "results", "artifacts", "job_exclusions"}) {
    EXPECT_EQ(query(path, std::string("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' "
                                      "AND name = '") + table + "'"),
              1)
        << table;
  }
}

TEST(Migrations, FileDatabaseIsWal) {
  TempDir dir;
  FakeClock clock;
  auto store = open_or_die(dir.file("wal.db"), &clock);
  ASSERT_NE(store, nullptr);
  absl::StatusOr<std::string> mode = store->journal_mode();
  ASSERT_TRUE(mode.ok()) << mode.status();
  EXPECT_EQ(*mode, "wal");
}

TEST(Migrations, NewerSchemaIsRefused) {
  TempDir dir;
  const std::string path = dir.file("future.db");
  FakeClock clock;
  { ASSERT_NE(open_or_die(path, &clock), nullptr); }
  exec(path, "INSERT INTO schema_migrations(version, description, applied_at) "
             "VALUES (999, 'from the future', 0)");
  absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(path, &clock);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("999"), std::string::npos) << s.status();
  EXPECT_NE(s.status().message().find("newer"), std::string::npos) << s.status();
  // Left alone.
  EXPECT_EQ(query(path, "SELECT MAX(version) FROM schema_migrations"), 999);
}

TEST(Migrations, LaterMigrationAppliedOnReopen) {
  TempDir dir;
  const std::string path = dir.file("grow.db");
  FakeClock clock(10);
  std::vector<Migration> v1 = {{1, "first", "CREATE TABLE a(x INTEGER);"}};
  std::vector<Migration> v2 = {v1[0], {2, "second", "CREATE TABLE b(y INTEGER); INSERT INTO b VALUES (7);"}};

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_TRUE(apply_migrations(db, clock, v1).ok());
  EXPECT_EQ(*schema_version(db), 1);
  clock.set(20);
  EXPECT_TRUE(apply_migrations(db, clock, v2).ok());
  EXPECT_EQ(*schema_version(db), 2);
  EXPECT_TRUE(apply_migrations(db, clock, v2).ok());  // nothing new
  // A build that knows only v1 refuses the database now.
  absl::Status old = apply_migrations(db, clock, v1);
  EXPECT_EQ(old.code(), absl::StatusCode::kFailedPrecondition) << old;
  sqlite3_close(db);
  EXPECT_EQ(query(path, "SELECT COUNT(*) FROM b"), 1);
  EXPECT_EQ(query(path, "SELECT applied_at FROM schema_migrations WHERE version = 2"), 20);
}

TEST(Migrations, FailedMigrationRollsBack) {
  TempDir dir;
  const std::string path = dir.file("broken.db");
  FakeClock clock;
  std::vector<Migration> list = {
      {1, "good", "CREATE TABLE a(x INTEGER);"},
      {2, "bad", "CREATE TABLE b(y INTEGER); INSERT INTO no_such_table VALUES (1);"}};
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  absl::Status st = apply_migrations(db, clock, list);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("migration 2"), std::string::npos) << st;
  EXPECT_EQ(*schema_version(db), 1);
  sqlite3_close(db);
  EXPECT_EQ(query(path, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'b'"), 0);
}

TEST(Migrations, NotADatabaseIsRefused) {
  TempDir dir;
  const std::string path = dir.file("notes.txt");
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("this is not an SQLite database, just some text long enough to look like a header\n", f);
  fclose(f);
  FakeClock clock;
  absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(path, &clock);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find(path), std::string::npos) << s.status();
  EXPECT_FALSE(Store::Open(dir.file("no/such/dir/x.db"), &clock).ok());
}

TEST(Migrations, OpenNeedsAClock) {
  EXPECT_EQ(Store::Open(":memory:", nullptr).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mono::db::testing
