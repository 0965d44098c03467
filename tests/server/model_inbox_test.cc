#include "tuner_server/model_inbox.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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

// The identity is taken from hashes fed as chunks arrive: the same as hashing the whole files.
TEST_F(InboxTest, IdentityIsTheHashOfNamesSizesAndContents) {
  Upload up(staging("h"), {}, 0);
  ASSERT_TRUE(up.add_chunk("model.onnx", 0, "abc").ok());
  ASSERT_TRUE(up.add_chunk("model.onnx", 3, "def").ok());
  ASSERT_TRUE(up.add_chunk("w.bin", 0, std::string(5000, 'z')).ok());
  auto d = up.commit(models());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(up.stored_new());
  const std::string expected = sha256_hex("model.onnx\n6\n" + sha256_hex("abcdef") + "\nw.bin\n5000\n" +
                                          sha256_hex(std::string(5000, 'z')) + "\n");
  EXPECT_EQ(up.sha256(), expected);
  EXPECT_EQ(*d, models() + "/" + expected);
}

TEST_F(InboxTest, QuotaBoundsUploadsPerClientInTotalAndStoredBytes) {
  UploadQuota q({2, 3, 1000, std::chrono::milliseconds(0)});  // storage measured at every upload
  auto a1 = q.admit("ipv4:10.0.0.1", models()), a2 = q.admit("ipv4:10.0.0.1", models());
  ASSERT_TRUE(a1.ok() && a2.ok());
  auto a3 = q.admit("ipv4:10.0.0.1", models());
  ASSERT_FALSE(a3.ok());
  EXPECT_EQ(a3.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(a3.status().message()).find("uploads in flight"), std::string::npos);
  auto b1 = q.admit("ipv4:10.0.0.2", models());
  ASSERT_TRUE(b1.ok());
  auto b2 = q.admit("ipv4:10.0.0.2", models());
  ASSERT_FALSE(b2.ok()) << "3 in total";
  a1->reset();  // an upload ends: room again
  EXPECT_TRUE(q.admit("ipv4:10.0.0.2", models()).ok());
  // Stored models over the limit: no new upload.
  fs::create_directories(models() + "/x");
  { std::ofstream(models() + "/x/model.onnx") << std::string(1000, 'm'); }
  auto full = q.admit("ipv4:10.0.0.3", models());
  ASSERT_FALSE(full.ok());
  EXPECT_NE(std::string(full.status().message()).find("storage is full"), std::string::npos);
}

TEST(Sha256, KnownVector) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace mono::server
