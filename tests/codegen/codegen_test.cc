// The CUDA backend without a GPU: every tiny model, in both precisions, plans into one kernel
// whose generated source compiles for sm_90 with NVRTC, holds exactly one __global__
// function, and uses no spill memory with the default schedule; the profiling build, fp16's
// fp32 fallback, what model text can reach, and shared group functions. (codegen_paths_test.cc:
// the GEMM, attention and epilogue paths; codegen_cnn_test.cc: the convolutional networks'.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/codegen/cost_model.h"
#include "compiler/codegen/cuda_emitter.h"
#include "compiler/codegen/emit/names.h"
#include "compiler/frontend/onnx_loader.h"
#include "compiler/ir/printer.h"
#include "compiler/ops/infer.h"
#include "compiler/ops/pool.h"
#include "compiler/passes/passes.h"
#include "compiler/backend/build.h"
#include "compiler/runtime/nvrtc_compiler.h"
#include "compiler/support/error.h"
#include "tests/codegen/tiny_model.h"
#include "tests/lib/test_models.h"

namespace mono {
namespace {


const std::vector<std::string> kModels = test::tiny_models();

struct Case {
  std::string model;
  Precision precision;
};

std::vector<Case> cases() {
  std::vector<Case> c;
  for (const std::string& m : kModels)
    for (Precision p : {Precision::kF32, Precision::kF16}) c.push_back({m, p});
  return c;
}

class CodegenTest : public ::testing::TestWithParam<Case> {};

TEST_P(CodegenTest, CompilesForSm90AsOneKernelWithoutSpills) {
  const Case& c = GetParam();
  LoadResult loaded = load_tiny(c.model);
  PlanOptions po;
  po.settings.precision = c.precision;
  NvrtcOptions nvrtc;  // no cache: compile for real
  nvrtc.sm_arch = 90;
  BuiltKernel b = build_kernel(*loaded.graph, po, c.model, nvrtc, /*compile=*/true);

  // One kernel.
  std::regex global(R"(__global__)");
  auto n_global = std::distance(std::sregex_iterator(b.source.begin(), b.source.end(), global), std::sregex_iterator());
  EXPECT_EQ(n_global, 1) << "expected exactly one __global__ function";
  for (const DeviceHeader& h : device_headers())
    EXPECT_EQ(std::string(h.text).find("__global__"), std::string::npos) << h.include_name << " defines a kernel";

  // Compiled, resources read back from ptxas, no spills.
  EXPECT_GT(b.compiled.cubin.size(), 1000u);
  EXPECT_GT(b.compiled.usage.registers, 0) << b.compiled.log;
  EXPECT_LE(b.compiled.usage.registers, b.plan.ctx.register_cap());
  EXPECT_EQ(b.compiled.usage.spill_store_bytes, 0) << b.compiled.log;
  EXPECT_EQ(b.compiled.usage.spill_load_bytes, 0) << b.compiled.log;
  EXPECT_EQ(b.compiled.usage.stack_frame_bytes, 0) << b.compiled.log;

  // Every group's schedule fits the context; barriers only between stages.
  for (const Group& g : b.plan.groups) EXPECT_LE(g.smem_bytes, b.plan.ctx.smem_bytes);
  // A layer loop's text holds one repeat's barriers.
  std::regex barrier(R"(grid_barrier\(p\.sync\))");
  const long barriers = std::distance(std::sregex_iterator(b.source.begin(), b.source.end(), barrier), std::sregex_iterator());
  EXPECT_EQ(barriers + repeated_stages(b.source), static_cast<long>(b.plan.stages.size()) - 1);
  std::printf("%-24s %s: %zu groups, %zu stages, %s\n", c.model.c_str(), c.precision == Precision::kF16 ? "fp16" : "fp32",
              b.plan.groups.size(), b.plan.stages.size(), b.compiled.usage.str().c_str());
}

INSTANTIATE_TEST_SUITE_P(Tiny, CodegenTest, ::testing::ValuesIn(cases()), [](const ::testing::TestParamInfo<Case>& info) {
  std::string n = std::string(info.param.model) + (info.param.precision == Precision::kF16 ? "_fp16" : "_fp32");
  for (char& ch : n)
    if (ch == '-') ch = '_';
  return n;
});

// Generated source names the ONNX nodes each stage implements, and no model text can end a
// comment early.
TEST(Codegen, SourceIsReadableAndModelTextIsEscaped) {
  LoadResult loaded = load_tiny("tiny-resnet-opset20");
  // A hostile node name.
  const_cast<Node*>(loaded.graph->nodes()[0].get())->name = "evil */ } int x; /*";
  BuiltKernel b = build_kernel(*loaded.graph, PlanOptions{}, "tiny-resnet */ oops", NvrtcOptions{}, false);
  EXPECT_NE(b.source.find("// ---- stage 0 ----"), std::string::npos);
  EXPECT_NE(b.source.find("(Conv)"), std::string::npos);
  EXPECT_EQ(b.source.find("evil */"), std::string::npos);
  EXPECT_EQ(b.source.find("resnet */"), std::string::npos);
}

// The device headers include nothing, so a kernel includes them in device_include_order(): every
// embedded header exactly once and nothing else (a header added to compiler/codegen/device/ needs
// its place in embed_device.cmake's list), and the generated source includes just those, in order.
TEST(Codegen, DeviceIncludeOrderListsEveryHeaderOnce) {
  std::multiset<std::string> embedded, ordered;
  for (const DeviceHeader& h : device_headers()) embedded.insert(h.include_name);
  for (const char* h : device_include_order()) ordered.insert(h);
  for (const std::string& h : embedded) EXPECT_EQ(ordered.count(h), 1u) << h << " in device_include_order()";
  for (const std::string& h : ordered) EXPECT_EQ(embedded.count(h), 1u) << h << " embedded";

  LoadResult loaded = load_tiny("tiny-bert-opset20");
  BuiltKernel b = build_kernel(*loaded.graph, PlanOptions{}, "tiny-bert-opset20", NvrtcOptions{}, false);
  std::vector<std::string> included;
  std::regex include(R"re(#include "([^"]+)")re");
  for (auto it = std::sregex_iterator(b.source.begin(), b.source.end(), include); it != std::sregex_iterator(); ++it)
    included.push_back((*it)[1]);
  EXPECT_EQ(included, std::vector<std::string>(device_include_order().begin(), device_include_order().end()));
}

}  // namespace
}  // namespace mono

namespace mono {
namespace {

// The profiling build stamps every stage twice (work done, barrier left; a layer loop's stages
// by the stage number of the repeat) and still compiles.
TEST(Codegen, ProfilingBuildCompiles) {
  LoadResult loaded = load_tiny("tiny-bert-opset20");
  PlanOptions po = fp16_options();
  po.settings.profile = true;
  BuiltKernel b = build_kernel(*loaded.graph, po, "tiny-bert", NvrtcOptions{}, true);
  size_t stamps = 0;
  for (size_t p = b.source.find("MONO_STAMP("); p != std::string::npos; p = b.source.find("MONO_STAMP(", p + 1)) ++stamps;
  const size_t repeated = static_cast<size_t>(repeated_stages(b.source));
  EXPECT_GT(repeated, 0u);
  EXPECT_NE(b.source.find("MONO_STAMP(1 + 7 * layer, 0);"), std::string::npos);
  EXPECT_EQ(stamps + 2 * repeated, 2 * b.plan.stages.size() + 1);  // + the macro's definition
  EXPECT_TRUE(b.manifest.profile);
  EXPECT_EQ(b.compiled.usage.spill_store_bytes, 0);
}

}  // namespace
}  // namespace mono

#include "compiler/reference/interpreter.h"

namespace mono {
namespace {

// fp16 with fp32 fallback: tensors whose calibrated range does not fit fp16 stay fp32, and a
// GEMM reading one runs on the fp32 path; models whose ranges fit keep everything in fp16.
TEST(Codegen, Fp16KeepsOutOfRangeTensorsInFp32) {
  for (const char* m : {"tiny-mobilenet-opset20", "tiny-bert-opset20"}) {
    LoadResult loaded = load_tiny(m);
    Graph& g = *loaded.graph;
    PlanOptions po;
    po.settings.precision = Precision::kF16;
    std::vector<Tensor> inputs;
    for (const Value* in : g.inputs) inputs.emplace_back(in->type);
    for (Tensor& t : inputs)
      if (is_float(t.dtype())) t = Tensor::from_floats(t.shape(), std::vector<float>(t.numel(), 0.5f));
    po.ranges = float_ranges(g, inputs);
    KernelPlan plan = plan_kernel(g, po);
    int f32_gemms = 0;
    for (const Group& grp : plan.groups) {
      if (grp.kind != GroupKind::kGemm && grp.kind != GroupKind::kConvGemm) continue;
      const DType a = plan.dtype_of(grp.anchor->inputs[0]), b = plan.dtype_of(grp.anchor->inputs[1]);
      EXPECT_EQ(a, b) << grp.nodes() << ": GEMM operands must share a type";
      EXPECT_EQ(grp.f16, a == DType::kF16);
      f32_gemms += !grp.f16;
    }
    if (std::string(m).find("mobilenet") != std::string::npos) {
      EXPECT_GT(plan.fp32_fallbacks, 0);
      EXPECT_GT(f32_gemms, 0);
    } else {
      EXPECT_EQ(plan.fp32_fallbacks, 0);
      EXPECT_EQ(f32_gemms, 0);
    }
  }
}

}  // namespace
}  // namespace mono

namespace mono {
namespace {

// Model text reaches the source only through comment_text and identifier: every byte value,
// alone and between letters, leaves printable ASCII without a backslash, a '?' (trigraphs),
// a NUL or a comment end.
TEST(GeneratedSource, CommentTextEscapesEveryByte) {
  for (int b = 0; b < 256; ++b) {
    for (const std::string& in : {std::string(1, static_cast<char>(b)), "a" + std::string(1, static_cast<char>(b)) + "b",
                                  std::string(3, static_cast<char>(b)) + "/"}) {
      const std::string out = emit::comment_text(in);
      for (unsigned char c : out) EXPECT_TRUE(c >= 0x20 && c <= 0x7e && c != '\\' && c != '?') << "byte " << b;
      EXPECT_EQ(out.find("*/"), std::string::npos) << "byte " << b;
    }
  }
  EXPECT_EQ(emit::comment_text("layer.0/attn\\"), "layer.0/attn<5c>");
  EXPECT_EQ(emit::comment_text("a*/b??/c<5c>"), "a* /b<3f><3f>/c<3c>5c>");
}

// Names cannot change what a kernel computes: tiny-resnet with every node and value name ending
// in a backslash, NUL, newline, "*/" and "??/" generates the same source once comments are
// removed (the bug: a name ending in '\\' spliced the next line of code into its comment).
TEST(GeneratedSource, NamesOnlyReachComments) {
  LoadResult plain = load_tiny("tiny-resnet-opset17");
  LoadResult hostile = load_tiny("tiny-resnet-opset17");
  const std::string suffix = std::string("\\\0\n*/??/\\", 9);
  for (const auto& n : hostile.graph->nodes()) n->name += suffix;
  for (const auto& v : hostile.graph->values()) v->name += suffix;
  PlanOptions po;
  const BuiltKernel a = build_kernel(*plain.graph, po, "m", NvrtcOptions{}, /*compile=*/false);
  const BuiltKernel b = build_kernel(*hostile.graph, po, "m", NvrtcOptions{}, /*compile=*/false);
  EXPECT_EQ(b.source.find('\0'), std::string::npos);
  EXPECT_EQ(b.source.find("\\\n"), std::string::npos);  // no line ends in a backslash
  EXPECT_NE(a.source, b.source);                         // the names do show, in comments
  EXPECT_EQ(emit::code_without_comments(a.source), emit::code_without_comments(b.source));
}

}  // namespace
}  // namespace mono

namespace mono {
namespace {

// Repeated layers share their group functions: code that differs only in comments (the node
// names an epilogue cites) is defined once. tiny-bert's two encoder layers out of line: every
// function of the second layer's groups is the first layer's, so each GEMM, softmax and
// LayerNorm function runs two groups or more, and there are fewer functions than groups.
TEST(Codegen, LayersShareGroupFunctionsWhateverTheirComments) {
  LoadResult loaded = load_tiny("tiny-bert-opset20");
  PlanOptions po;
  po.settings.precision = Precision::kF16;
  po.settings.inline_groups = 0;
  const BuiltKernel b = build_kernel(*loaded.graph, po, "tiny-bert-opset20", NvrtcOptions{}, false);
  const std::regex function(R"re(\n// (groups?) ([0-9, ]+)\nstatic __device__ __noinline__ void (g[0-9]+_[a-z_]+)\()re");
  int functions = 0;
  std::map<std::string, int> users;  // function -> groups it runs
  for (auto it = std::sregex_iterator(b.source.begin(), b.source.end(), function); it != std::sregex_iterator(); ++it) {
    ++functions;
    const std::string list = (*it)[2];
    users[(*it)[3]] = 1 + static_cast<int>(std::count(list.begin(), list.end(), ','));
  }
  ASSERT_GT(functions, 0) << "no out-of-line group functions found in:\n" << b.source.substr(0, 2000);
  int groups_run = 0;
  for (const auto& [name, n] : users) {
    groups_run += n;
    if (name.find("_mat_mul") != std::string::npos || name.find("_softmax") != std::string::npos ||
        name.find("_layer_normalization") != std::string::npos)
      EXPECT_GE(n, 2) << name << " runs one group: the second layer did not reuse the first layer's function";
  }
  // Groups that run as their own work (the parts of an attention group run inside its head:
  // FlashAttention has no function per part).
  int own = 0;
  for (const Group& g : b.plan.groups) own += g.fused_into < 0;
  EXPECT_LT(functions, own / 2 + 2);
  EXPECT_GE(groups_run, own - 1);
}

}  // namespace
}  // namespace mono
