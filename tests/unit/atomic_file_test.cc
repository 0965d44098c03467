// Files written whole or not at all (issue 22, finding 4: on a full disk `mono-compile --out`
// exited 0 with a truncated cubin, and the cubin cache was trusted blindly).
#include "compiler/support/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace mono {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(MONO_BINARY_DIR) / ("test-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(AtomicFile, WritesWholeAndReplaces) {
  const fs::path d = fresh_dir("atomic");
  std::string error;
  ASSERT_TRUE(write_file_atomic((d / "f").string(), "first", &error)) << error;
  ASSERT_TRUE(write_file_atomic((d / "f").string(), std::string(100000, 'x'), &error)) << error;
  EXPECT_EQ(read(d / "f"), std::string(100000, 'x'));
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 1) << "no temporary file left";
  fs::remove_all(d);
}

// A write that runs out of space (here: the file-size limit, as a full disk would) fails,
// leaves the old contents, and leaves no temporary file.
// read_file_whole returns a file's bytes exactly (zeros included, into a string or a byte
// vector), an empty file as nothing, and false for an absent file or a folder.
TEST(AtomicFile, ReadsAFileWhole) {
  const fs::path d = fresh_dir("read-whole");
  std::string bytes(70000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 7) % 256);
  std::string err;
  ASSERT_TRUE(write_file_atomic((d / "f").string(), bytes, &err)) << err;
  std::string got;
  ASSERT_TRUE(read_file_whole((d / "f").string(), &got));
  EXPECT_EQ(got, bytes);
  std::vector<unsigned char> v;
  ASSERT_TRUE(read_file_whole((d / "f").string(), &v));
  EXPECT_EQ(std::string(v.begin(), v.end()), bytes);
  ASSERT_TRUE(write_file_atomic((d / "empty").string(), std::string(), &err)) << err;
  got = "x";
  ASSERT_TRUE(read_file_whole((d / "empty").string(), &got));
  EXPECT_TRUE(got.empty());
  EXPECT_FALSE(read_file_whole((d / "absent").string(), &got));
  EXPECT_FALSE(read_file_whole(d.string(), &got));
  fs::remove_all(d);
}

TEST(AtomicFile, AFailedWriteLeavesTheOldFileAndNoTemporary) {
  const fs::path d = fresh_dir("atomic-full");
  std::string error;
  ASSERT_TRUE(write_file_atomic((d / "cubin").string(), "old", &error)) << error;
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit saved;
  getrlimit(RLIMIT_FSIZE, &saved);
  rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const bool ok = write_file_atomic((d / "cubin").string(), std::string(1 << 20, 'y'), &error);
  setrlimit(RLIMIT_FSIZE, &saved);
  EXPECT_FALSE(ok);
  EXPECT_NE(error.find("cannot write"), std::string::npos) << error;
  EXPECT_EQ(read(d / "cubin"), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 1) << "no temporary file left";
  EXPECT_FALSE(write_file_atomic((d / "no-such-dir" / "f").string(), "x", &error));
  EXPECT_NE(error.find("cannot create"), std::string::npos) << error;
  fs::remove_all(d);
}

}  // namespace
}  // namespace mono
