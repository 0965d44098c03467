#include "tuner_server/model_inbox.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace mono::server {
namespace {

namespace fs = std::filesystem;

class InboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("mono_inbox_" + std::to_string(::getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string staging(const std::string& n) { return (root_ / "staging" / n).string(); }
  std::string models() { return (root_ / "models").string(); }
  fs::path root_;
};

TEST_F(InboxTest, StoresACompleteUploadUnderItsHashAndReusesIt) {
  std::string dir1, dir2;
  {
    Upload up(staging("a"), {}, 10);
    ASSERT_TRUE(up.add_chunk("model.onnx", 0, "hello").ok());
    ASSERT_TRUE(up.add_chunk("model.onnx", 5, "world").ok());
    auto d = up.commit(models());
    ASSERT_TRUE(d.ok()) << d.status();
    dir1 = *d;
  }
  EXPECT_TRUE(fs::exists(dir1 + "/model.onnx"));
  EXPECT_EQ(fs::file_size(dir1 + "/model.onnx"), 10u);
  {
    Upload up(staging("b"), {}, 10);
    ASSERT_TRUE(up.add_chunk("model.onnx", 0, "helloworld").ok());
    auto d = up.commit(models());
    ASSERT_TRUE(d.ok());
    dir2 = *d;
  }
  EXPECT_EQ(dir1, dir2);
  EXPECT_FALSE(fs::exists(staging("b"))) << "the duplicate's staging copy must go";
}

TEST_F(InboxTest, RejectsUnsafeNamesOversizeGapsAndIncompleteUploads) {
  Upload up(staging("c"), InboxLimits{100, 4, 50}, 60);
  EXPECT_FALSE(up.add_chunk("../etc/passwd", 0, "x").ok());
  EXPECT_FALSE(up.add_chunk("sub/model.onnx", 0, "x").ok());
  EXPECT_FALSE(up.add_chunk(".hidden", 0, "x").ok());
  EXPECT_FALSE(up.add_chunk("model.onnx", 0, std::string(51, 'x')).ok()) << "chunk over the limit";
  ASSERT_TRUE(up.add_chunk("model.onnx", 0, std::string(30, 'x')).ok());
  EXPECT_FALSE(up.add_chunk("model.onnx", 40, "y").ok()) << "a gap in the file";
  EXPECT_FALSE(up.add_chunk("model.onnx.data", 0, std::string(31, 'x')).ok()) << "beyond the declared size";
  auto d = up.commit(models());
  EXPECT_FALSE(d.ok()) << "30 of 60 bytes";
}

TEST_F(InboxTest, AnAbandonedUploadLeavesNothing) {
  {
    Upload up(staging("d"), {}, 0);
    ASSERT_TRUE(up.add_chunk("model.onnx", 0, "partial").ok());
  }
  EXPECT_FALSE(fs::exists(staging("d")));
  EXPECT_FALSE(fs::exists(models()));
}

TEST(Sha256, KnownVector) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace mono::server
