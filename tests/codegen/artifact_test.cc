// The artifact a compile writes and the runtime reads back (weights.bin, the manifest's tensor maps
// and verification record) and the NVRTC cubin cache behind it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compiler/backend/artifact_writer.h"
#include "compiler/backend/build.h"
#include "compiler/backend/verify.h"
#include "compiler/codegen/cuda_emitter.h"
#include "compiler/runtime/cuda_model.h"
#include "compiler/runtime/nvrtc_compiler.h"
#include "compiler/support/error.h"
#include "tests/codegen/tiny_model.h"

namespace mono {
namespace {

// read_binary (the runtime's loader of weights.bin and kernel.cubin) returns the file's bytes
// exactly: an artifact's weights come back as pack_weights made them, an empty file as nothing,
// and a missing file or a folder is one clear error naming it.
TEST(Codegen, ArtifactFilesReadBackByteForByte) {
  LoadResult loaded = load_tiny("tiny-bert-opset17");
  PlanOptions po;
  po.settings.precision = Precision::kF16;
  const BuiltKernel built = build_kernel(*loaded.graph, po, "tiny-bert", NvrtcOptions{}, false);
  const std::string dir = ::testing::TempDir() + "/mono_read_binary_artifact";
  write_artifact(dir, *loaded.graph, built, unverified_record("a test"));
  const std::vector<unsigned char> want = pack_weights(built.plan);
  ASSERT_GT(want.size(), 0u);
  EXPECT_EQ(read_binary(dir + "/weights.bin"), want);
  std::ofstream(dir + "/empty.bin", std::ios::binary);
  EXPECT_TRUE(read_binary(dir + "/empty.bin").empty());
  std::filesystem::create_directories(dir + "/a_folder");
  for (const std::string& bad : {dir + "/missing.bin", dir + "/a_folder"}) {
    try {
      read_binary(bad);
      ADD_FAILURE() << bad << " was read";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

// The manifest carries the tensor maps, and a manifest whose map would reach beyond the arena
// or break the encoder's limits is refused with the map's number.
TEST(Codegen, ManifestTensorMapsRoundTripAndAreChecked) {
  LoadResult loaded = load_tiny("tiny-bert-opset17");
  PlanOptions po;
  po.settings.precision = Precision::kF16;
  const BuiltKernel built = build_kernel(*loaded.graph, po, "tiny-bert", NvrtcOptions{}, false);
  ASSERT_FALSE(built.manifest.tensor_maps.empty());
  const std::string dir = ::testing::TempDir() + "/mono_tmap_artifact";
  write_artifact(dir, *loaded.graph, built, unverified_record("a test"));
  const Manifest m = read_manifest(dir);
  ASSERT_EQ(m.tensor_maps.size(), built.manifest.tensor_maps.size());
  EXPECT_TRUE(m.tensor_maps == built.manifest.tensor_maps);  // every field of every map
  // Corrupt the last map: past the arena, then a box of 300 rows.
  std::string text;
  {
    std::ifstream in(dir + "/manifest.json");
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto rewrite = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.rfind(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) t.replace(at, from.size(), to);
    std::ofstream(dir + "/manifest.json") << t;
  };
  const std::string off = str_cat("\"arena_offset\": ", m.tensor_maps.back().arena_offset);
  rewrite(off, str_cat("\"arena_offset\": ", m.arena_bytes));
  try {
    read_manifest(dir);
    ADD_FAILURE() << "a map beyond the arena was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(str_cat("tensor map ", m.tensor_maps.size() - 1, " reaches beyond the arena")),
              std::string::npos)
        << e.what();
  }
  rewrite(off, "\"arena_offset\": -16");
  try {
    read_manifest(dir);
    ADD_FAILURE() << "a negative arena offset was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("negative arena offset"), std::string::npos) << e.what();
  }
  rewrite(str_cat("\"box_rows\": ", m.tensor_maps.back().box_rows), "\"box_rows\": 300");
  try {
    read_manifest(dir);
    ADD_FAILURE() << "a 300-row box was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("box rows"), std::string::npos) << e.what();
  }
}

// The manifest's verification record reads back as one line; an artifact whose verification
// failed is refused before anything runs.
TEST(Codegen, ManifestVerificationRecordRoundTripsAndAFailedOneDoesNotLoad) {
  LoadResult loaded = load_tiny("tiny-resnet-opset17");
  const BuiltKernel built = build_kernel(*loaded.graph, PlanOptions{}, "tiny-resnet", NvrtcOptions{}, false);
  const std::string dir = ::testing::TempDir() + "/mono_verification_artifact";
  const Tensor want = Tensor::from_floats({4}, {1, 2, 3, 4});
  const Tensor close = Tensor::from_floats({4}, {1, 2, 3, 4.00004f});
  const Tensor wrong = Tensor::from_floats({4}, {1, 2, 3, 5});

  write_artifact(dir, *loaded.graph, built, unverified_record("no GPU here"));
  EXPECT_EQ(read_manifest(dir).verification, "not verified: no GPU here");

  const Verification pass = compare_outputs({"y"}, {close}, {want}, "fp32");
  ASSERT_TRUE(pass.ok);
  write_artifact(dir, *loaded.graph, built, verification_record(pass, "the CPU reference", "a GPU"));
  Manifest m = read_manifest(dir);
  EXPECT_FALSE(m.verification_failed);
  EXPECT_EQ(m.verification.rfind("verified PASS against the CPU reference on a GPU, worst relative error 1e-05", 0), 0u)
      << m.verification;

  const Verification fail = compare_outputs({"y"}, {wrong}, {want}, "fp32");
  ASSERT_FALSE(fail.ok);
  write_artifact(dir, *loaded.graph, built, verification_record(fail, "the CPU reference", "a GPU"));
  m = read_manifest(dir);
  EXPECT_TRUE(m.verification_failed);
  try {
    GpuModel::load(dir, NvrtcOptions{});
    ADD_FAILURE() << "an artifact that failed its verification loaded";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("failed its verification (verified FAILED"), std::string::npos) << e.what();
  }
}

// NVRTC's own cache (in the driver's compute cache, on GPU machines) answers without ptxas's
// output, so the kernel's registers would read -1 (run53; bench/nvcache_check.sh shows it on the
// GPU): the runtime switches it off before main(), unless the user set CUDA_CACHE_DISABLE, and a
// kernel compiled twice reports its resources both times.
TEST(NvrtcCache, NvrtcsOwnCacheIsOffAndResourcesAlwaysRead) {
  const char* v = std::getenv("CUDA_CACHE_DISABLE");
  ASSERT_NE(v, nullptr) << "the runtime did not switch NVRTC's cache off";
  if (std::string(v) != "1") GTEST_SKIP() << "CUDA_CACHE_DISABLE=" << v << " was set by the environment, and is kept";
  const std::string src = "extern \"C\" __global__ void thrice(float* p) { p[threadIdx.x] *= 3.0f; }\n";
  for (int i = 0; i < 2; ++i) {
    const CompiledKernel k = compile_cuda(src, "thrice", NvrtcOptions{});  // no Mono cache either
    EXPECT_GT(k.usage.registers, 0) << "compile " << i << ":\n" << k.log;
    EXPECT_EQ(k.usage.spill_store_bytes, 0) << "compile " << i;
  }
}

// The cubin cache trusts an entry only when its .meta (written last) matches the cubin and the
// log: a truncated cubin (a full disk, a crash) is rebuilt, not loaded (issue 22, finding 4).
TEST(NvrtcCache, ATornEntryIsRebuiltNotTrusted) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(MONO_BINARY_DIR) / ("test-cubin-cache-" + std::to_string(getpid()));
  fs::remove_all(dir);
  NvrtcOptions o;
  o.cache_dir = dir.string();
  const std::string src = "extern \"C\" __global__ void twice(float* p) { p[threadIdx.x] *= 2.0f; }\n";
  const CompiledKernel a = compile_cuda(src, "twice", o);
  EXPECT_FALSE(a.from_cache);
  const CompiledKernel b = compile_cuda(src, "twice", o);
  EXPECT_TRUE(b.from_cache);
  EXPECT_EQ(b.cubin, a.cubin);
  const fs::path cubin = dir / (a.key + ".cubin");
  ASSERT_TRUE(fs::exists(cubin));
  fs::resize_file(cubin, fs::file_size(cubin) / 2);
  const CompiledKernel c = compile_cuda(src, "twice", o);
  EXPECT_FALSE(c.from_cache) << "a truncated cubin was taken from the cache";
  EXPECT_EQ(c.cubin, a.cubin);
  EXPECT_TRUE(compile_cuda(src, "twice", o).from_cache);
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mono
