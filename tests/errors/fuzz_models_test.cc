// Damaged copies of the tiny models — truncated at random lengths, or with random bits
// flipped — must each either load (and then simplify and run) or be rejected with a
// UserError: never a crash, an internal error or a hang. CI runs this test under
// AddressSanitizer and UBSan too (MONO_SANITIZE=ON).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "compiler/frontend/onnx_loader.h"
#include "compiler/passes/passes.h"
#include "compiler/reference/interpreter.h"
#include "compiler/support/error.h"
#include "tests/errors/model_builder.h"
#include "tests/lib/test_models.h"

namespace mono::testing {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kModels = test::tiny_models();
constexpr int kVariantsPerModel = 40;
// A damaged model that loads is run only if its tensors stay small (a flipped dimension can
// legitimately ask for a lot of memory and time; that is not a crash).
constexpr int64_t kMaxRunElements = 1 << 22;

enum class Result { kLoadedAndRan, kLoaded, kRejected };

Result try_model(const std::string& path) {
  try {
    LoadResult loaded = load_onnx(path);
    Graph& g = *loaded.graph;
    simplify(g);
    for (const auto& v : g.values())
      if (v->type.numel() > kMaxRunElements) return Result::kLoaded;
    std::vector<Tensor> inputs;
    for (const Value* in : g.inputs) inputs.emplace_back(in->type);  // zeros: valid indices
    run_reference(g, inputs);
    return Result::kLoadedAndRan;
  } catch (const UserError&) {
    return Result::kRejected;
  }
}

TEST(Fuzz, DamagedModelsLoadOrAreRejectedCleanly) {
  const fs::path dir = fs::temp_directory_path() / ("mono_fuzz_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::mt19937_64 rng(20261121);
  int ran = 0, loaded = 0, rejected = 0, total = 0;
  for (const std::string& name : kModels) {
    const std::string original = read_bytes(std::string(MONO_SOURCE_DIR) + "/tests/data/models/" + name + "/model.onnx");
    for (int v = 0; v < kVariantsPerModel; ++v) {
      std::string bytes = original;
      std::string what;
      if (v % 2 == 0) {
        size_t len = std::uniform_int_distribution<size_t>(0, bytes.size() - 1)(rng);
        bytes.resize(len);
        what = "truncated to " + std::to_string(len);
      } else {
        int flips = 1 + static_cast<int>(rng() % 8);
        what = "bits flipped at";
        for (int f = 0; f < flips; ++f) {
          size_t pos = std::uniform_int_distribution<size_t>(0, bytes.size() - 1)(rng);
          bytes[pos] = static_cast<char>(bytes[pos] ^ (1 << (rng() % 8)));
          what += " " + std::to_string(pos);
        }
      }
      const std::string path = (dir / "model.onnx").string();
      write_bytes(path, bytes);
      ++total;
      try {
        switch (try_model(path)) {
          case Result::kLoadedAndRan: ++ran; break;
          case Result::kLoaded: ++loaded; break;
          case Result::kRejected: ++rejected; break;
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << name << " " << what << ": not a clean rejection: " << e.what();
      }
    }
  }
  fs::remove_all(dir);
  std::printf("fuzz: %d variants: %d loaded and ran, %d loaded (too large to run), %d rejected cleanly\n", total,
              ran, loaded, rejected);
  EXPECT_EQ(ran + loaded + rejected, total);
  EXPECT_GT(rejected, total / 4);
}

}  // namespace
}  // namespace mono::testing
