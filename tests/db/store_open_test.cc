// A database is never silently replaced by an empty one (issue 22, finding 7): a 0-byte file,
// a file whose data went with its deleted -wal file, and a page-corrupted file are refused at
// Open with a clear error; a new file is reported as created.
#include <sqlite3.h>

#include <fstream>

#include "tests/db/db_test_util.h"

namespace mono::db {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

void add_jobs(Store& s, int n) {
  for (int i = 0; i < n; ++i) {
    NewJob j;
    j.id = "job" + std::to_string(i);
    j.payload = std::string(2000, 'x');  // enough rows to span several pages
    ASSERT_TRUE(s.add_job(j).ok());
  }
}

TEST(StoreOpen, NewFileIsCreatedAndReopenedAsSuch) {
  TempDir dir;
  FakeClock clock;
  const std::string path = dir.file("mono.db");
  {
    auto s = testing::open_or_die(path, &clock);
    EXPECT_TRUE(s->created());
    add_jobs(*s, 3);
  }
  auto again = Store::Open(path, &clock);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE((*again)->created());
}

TEST(StoreOpen, EmptyFileIsRefused) {
  TempDir dir;
  FakeClock clock;
  const std::string path = dir.file("mono.db");
  std::ofstream(path).close();
  auto s = Store::Open(path, &clock);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("is an empty file (0 bytes): refusing to start on it"), std::string::npos)
      << s.status();
  EXPECT_EQ(fs::file_size(path), 0u);  // left as it was
}

// The data of a database lives in its -wal file until a checkpoint: delete that file before
// the first one and the main file keeps only SQLite's header, as made here. (Open checkpoints
// at once, and the server about once a minute, so a later loss costs at most that minute.)
TEST(StoreOpen, DataLostWithItsWalIsRefused) {
  TempDir dir;
  FakeClock clock;
  const std::string path = dir.file("mono.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  ASSERT_GT(fs::file_size(path), 0u);
  auto s = Store::Open(path, &clock);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("exists but holds no Mono tables"), std::string::npos) << s.status();
}

TEST(StoreOpen, CorruptPagesAreRefused) {
  TempDir dir;
  FakeClock clock;
  const std::string path = dir.file("mono.db");
  add_jobs(*testing::open_or_die(path, &clock), 40);  // closing checkpoints the log into the file
  const auto size = fs::file_size(path);
  ASSERT_GT(size, 16u * 4096);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    for (std::streamoff page = 2; page * 4096 < static_cast<std::streamoff>(size); page += 3) {
      f.seekp(page * 4096);  // the b-tree page header
      const std::string junk(12, '\xA5');
      f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    }
  }
  auto s = Store::Open(path, &clock);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("fails SQLite's integrity check"), std::string::npos) << s.status();
}

}  // namespace
}  // namespace mono::db
