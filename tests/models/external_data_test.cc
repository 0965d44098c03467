// Weights in an external data file next to the model (what torch.export writes for large
// models): loaded by memory-mapping the file, not copied, and computing the same outputs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/driver/test_data.h"
#include "compiler/frontend/onnx_loader.h"
#include "compiler/reference/compare.h"
#include "compiler/reference/interpreter.h"
#include "tests/errors/model_builder.h"

namespace mono::testing {
namespace {

namespace fs = std::filesystem;

// Address ranges of the mappings of `file` in this process.
std::vector<std::pair<uintptr_t, uintptr_t>> mappings_of(const std::string& file) {
  std::vector<std::pair<uintptr_t, uintptr_t>> out;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const std::string canonical = fs::canonical(file).string();
  while (std::getline(maps, line)) {
    if (line.size() < canonical.size() || line.compare(line.size() - canonical.size(), canonical.size(), canonical) != 0)
      continue;
    uintptr_t lo = 0, hi = 0;
    std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi);
    out.emplace_back(lo, hi);
  }
  return out;
}

TEST(ExternalData, WeightsAreMappedNotCopiedAndOutputsMatch) {
  const std::string src = std::string(MONO_SOURCE_DIR) + "/tests/data/models/tiny-bert-opset20";
  const fs::path dir = fs::temp_directory_path() / ("mono_ext_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  onnx::ModelProto m = read_model_proto(src + "/model.onnx");
  // Move every initializer of 256 bytes or more into model.onnx.data, 64-byte aligned.
  std::string data;
  int moved = 0;
  for (auto& t : *m.mutable_graph()->mutable_initializer()) {
    if (t.raw_data().size() < 256) continue;
    while (data.size() % 64) data.push_back('\0');
    const size_t offset = data.size();
    data += t.raw_data();
    const size_t length = t.raw_data().size();
    t.clear_raw_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* k, const std::string& v) {
      auto* kv = t.add_external_data();
      kv->set_key(k);
      kv->set_value(v);
    };
    add("location", "model.onnx.data");
    add("offset", std::to_string(offset));
    add("length", std::to_string(length));
    ++moved;
  }
  ASSERT_GT(moved, 10);
  write_bytes((dir / "model.onnx.data").string(), data);
  write_model_proto(m, (dir / "model.onnx").string());
  EXPECT_LE(fs::file_size(dir / "model.onnx") + data.size(), fs::file_size(src + "/model.onnx") + 64 * moved)
      << "weights should live in the data file";

  LoadResult loaded = load_onnx((dir / "model.onnx").string());
  auto ranges = mappings_of((dir / "model.onnx.data").string());
  ASSERT_FALSE(ranges.empty()) << "model.onnx.data is not memory-mapped";
  int mapped = 0;
  for (const Value* c : loaded.graph->constants()) {
    auto p = reinterpret_cast<uintptr_t>(c->constant->raw());
    for (auto [lo, hi] : ranges) mapped += p >= lo && p < hi;
  }
  EXPECT_EQ(mapped, moved) << "every external weight should be a view into the mapping";

  TestCase tc = read_test_case(src + "/test_data_set_0");
  std::vector<Tensor> outs = run_reference(*loaded.graph, match_inputs(*loaded.graph, tc));
  Comparison c = compare_tensors(outs[0], tc.outputs[0]);
  EXPECT_TRUE(c.ok(1e-4)) << c.rel;
  loaded.graph.reset();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mono::testing
