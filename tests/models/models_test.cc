// The tiny real models (both exporters) through the CPU reference against their test data,
// and the effect of simplification on each.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>

#include "compiler/driver/test_data.h"
#include "compiler/frontend/onnx_loader.h"
#include "compiler/ir/printer.h"
#include "compiler/passes/passes.h"
#include "compiler/reference/compare.h"
#include "compiler/reference/interpreter.h"
#include "tests/lib/test_models.h"

namespace mono {
namespace {

const std::vector<std::string> kModels = test::tiny_models();

std::string model_dir(const std::string& name) { return std::string(MONO_SOURCE_DIR) + "/tests/data/models/" + name; }

struct Summary {
  size_t loaded = 0, simplified = 0;
  std::map<std::string, int> ops;
};
std::map<std::string, Summary>& summaries() {
  static std::map<std::string, Summary> s;
  return s;
}

class ModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelTest, MatchesTestDataBeforeAndAfterSimplification) {
  const std::string dir = model_dir(GetParam());
  LoadResult loaded = load_onnx(dir + "/model.onnx");
  Graph& g = *loaded.graph;
  TestCase tc = read_test_case(dir + "/test_data_set_0");
  std::vector<Tensor> inputs = match_inputs(g, tc);

  auto check = [&](const char* stage) {
    auto start = std::chrono::steady_clock::now();
    std::vector<Tensor> outs = run_reference(g, inputs);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    ASSERT_EQ(outs.size(), tc.outputs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      Comparison c = compare_tensors(outs[i], tc.outputs[i]);
      EXPECT_TRUE(c.ok(1e-4)) << GetParam() << " " << stage << " output " << i << ": relative error " << c.rel;
      std::printf("%-24s %-10s relative error %.2e, %.1f ms\n", GetParam().c_str(), stage, c.rel, ms);
    }
  };
  // Nodes that compute (views and Reshapes cost nothing: the backend aliases them). Transposes
  // are not counted either: patch_conv turns a patch embedding into Transposes around a Gemm
  // (they replace its im2col index arithmetic; the planner folds most into their neighbours),
  // and channels_last puts them at a region's edges, with a Pad of an image's channels to 8
  // (one copy with the Transpose that follows it). A BatchNormalization counts as what it
  // computes, a scale and a shift: fold_batch_norm writes one that no Conv absorbs as a Mul and
  // an Add.
  auto computing = [&] {
    size_t n = 0;
    for (const auto& node : g.nodes())
      if (node->op == OpKind::kBatchNormalization)
        n += 2;
      else
        n += node->op != OpKind::kReshape && node->op != OpKind::kSqueeze && node->op != OpKind::kUnsqueeze &&
             node->op != OpKind::kFlatten && node->op != OpKind::kIdentity && node->op != OpKind::kTranspose &&
             node->op != OpKind::kPad;
    return n;
  };
  Summary& s = summaries()[GetParam()];
  s.loaded = g.num_nodes();
  const size_t computing_loaded = computing();
  check("loaded");
  simplify(g);
  s.simplified = g.num_nodes();
  for (const auto& n : g.nodes()) ++s.ops[op_name(n->op)];
  check("simplified");
  // Canonicalization may add a view (ReduceMean(keepdims=0) -> GlobalAveragePool + Reshape),
  // never a node that computes.
  EXPECT_LE(computing(), computing_loaded);
  for (const char* gone : {"Identity", "Constant", "Shape", "Dropout", "Erf"})
    EXPECT_EQ(s.ops.count(gone), 0u) << GetParam() << " still has " << gone << " after simplification";
  // A BatchNormalization after a Conv is folded into it; the others (DenseNet's, after a
  // Concat) become a Mul and an Add. None is left.
  for (const auto& n : g.nodes())
    EXPECT_NE(n->op, OpKind::kBatchNormalization) << GetParam() << ": " << n->describe() << " was not folded";
}

INSTANTIATE_TEST_SUITE_P(Tiny, ModelTest, ::testing::ValuesIn(kModels),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& c : n) if (c == '-') c = '_';
                           return n;
                         });

TEST(ModelSummary, BothExportersSimplifyToTheSameGraphSize) {
  auto& s = summaries();
  for (const std::string& m : kModels) {
    LoadResult loaded = load_onnx(model_dir(m) + "/model.onnx");
    Summary& sum = s[m];
    sum = Summary{};
    sum.loaded = loaded.graph->num_nodes();
    simplify(*loaded.graph);
    sum.simplified = loaded.graph->num_nodes();
    for (const auto& n : loaded.graph->nodes()) ++sum.ops[op_name(n->op)];
  }
  std::printf("\n%-24s %7s %11s\n", "model", "loaded", "simplified");
  for (const auto& [name, sum] : s) std::printf("%-24s %7zu %11zu\n", name.c_str(), sum.loaded, sum.simplified);
  for (const char* m : {"tiny-bert", "tiny-mobilenet", "tiny-resnet", "tiny-vit"}) {
    const Summary& a = s[std::string(m) + "-opset17"];
    const Summary& b = s[std::string(m) + "-opset20"];
    EXPECT_EQ(a.simplified, b.simplified) << m;
    EXPECT_EQ(a.ops, b.ops) << m << ": the two exports simplify to different op mixes";
  }
}

}  // namespace
}  // namespace mono

namespace mono {
namespace {

// The float16 CPU reference (every float tensor stored in fp16, one rounding per op) is what
// the fp16 GPU kernels are compared with to tell precision from bugs.
TEST(Float16Reference, TinyModelsWithinOnePercentExceptWhereFp16CannotHoldTheValues) {
  for (const std::string& m : kModels) {
    const std::string dir = model_dir(m);
    LoadResult loaded = load_onnx(dir + "/model.onnx");
    simplify(*loaded.graph);
    convert_float_precision(*loaded.graph, DType::kF16);
    TestCase tc = read_test_case(dir + "/test_data_set_0");
    for (Tensor& t : tc.inputs)
      if (t.dtype() == DType::kF32) t = t.cast(DType::kF16);
    std::vector<Tensor> outs = run_reference(*loaded.graph, match_inputs(*loaded.graph, tc));
    Comparison c = compare_tensors(outs[0].cast(DType::kF32), tc.outputs[0]);
    std::printf("%-24s fp16 reference: relative error %.2e (output max %.2e)\n", m.c_str(), c.rel, c.max_ref);
    EXPECT_GT(c.max_ref, 0.0) << m << ": all-zero outputs test nothing";
    if (c.max_ref < 6.1e-5) {
      // Outputs below float16's smallest normal, 6.1e-5, are not representable (tiny-mobilenet's
      // are ~7e-8): only the fp32 checks hold for them.
      EXPECT_NE(m.find("tiny-mobilenet-opset"), std::string::npos) << m << " has outputs fp16 cannot hold";
      continue;
    }
    EXPECT_TRUE(c.ok(1e-2)) << m << ": " << c.rel;
  }
}

}  // namespace
}  // namespace mono
