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
