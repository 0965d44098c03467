// Layer loops (compiler/codegen/emit/stages.h): which runs of stages become loops, and that a
// loop runs what the straight stages would: each repeat of its text, with `layer` and the
// table's values put in and every buffer name expanded to its pointer, is the stage's own item
// loop, for every tiny model in both precisions and for a graph of identical blocks.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/codegen/cuda_emitter.h"
#include "compiler/codegen/emit/stages.h"
#include "compiler/support/error.h"
#include "tests/codegen/tiny_model.h"
#include "tests/lib/test_models.h"

namespace mono {
namespace {

using emit::LayerLoop;

std::vector<int> ids(const std::string& shapes) {  // one id per letter
  std::vector<int> v;
  for (char c : shapes) v.push_back(c);
  return v;
}

std::string str(const std::vector<LayerLoop>& loops) {
  std::string s;
  for (const LayerLoop& l : loops) s += str_cat(s.empty() ? "" : " ", l.first, ":", l.period, "x", l.repeats);
  return s;
}

TEST(LayerLoops, TheRunThatSavesTheMostStagesThenEitherSide) {
  auto find = [](const std::string& shapes) {
    const std::vector<int> v = ids(shapes);
    return str(emit::find_layer_loops(v, 0, static_cast<int>(v.size())));
  };
  EXPECT_EQ(find("ABCDEF"), "");
  EXPECT_EQ(find("A"), "");
  EXPECT_EQ(find(""), "");
  // A transformer: embedding, 4 layers of 3 stages, a head.
  EXPECT_EQ(find("EabcabcabcabcH"), "1:3x4");
  // A period's stages may repeat within it: the period that saves the most wins, the shortest
  // and earliest on a tie.
  EXPECT_EQ(find("aaaa"), "0:1x4");
  EXPECT_EQ(find("aaaXbcbc"), "0:1x3 4:2x2");
  EXPECT_EQ(find("ababab"), "0:2x3");
  // Two loops: the one saving more first, then the other side.
  EXPECT_EQ(find("abababXccc"), "0:2x3 7:1x3");
  // A partial repeat at the end stays outside the loop.
  EXPECT_EQ(find("abcabcab"), "0:3x2");
  // Within [begin, end) only.
  const std::vector<int> v = ids("aaaab");
  EXPECT_EQ(str(emit::find_layer_loops(v, 1, 4)), "1:1x3");
}

// name -> pointer text, from the source's buffer macros.
std::map<std::string, std::string> buffer_macros(const std::string& source) {
  std::map<std::string, std::string> defs;
  std::regex def(R"(#define (\w+) \((.*?)\)(  //.*)?\n)");
  for (auto it = std::sregex_iterator(source.begin(), source.end(), def); it != std::sregex_iterator(); ++it)
    defs[(*it)[1]] = "(" + (*it)[2].str() + ")";
  return defs;
}

// Every identifier that names a buffer macro, replaced by its pointer text.
std::string expand(const std::string& text, const std::map<std::string, std::string>& defs) {
  std::string out;
  std::regex word(R"(\b[A-Za-z_]\w*\b)");
  size_t last = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), word); it != std::sregex_iterator(); ++it) {
    out += text.substr(last, it->position() - last);
    auto d = defs.find(it->str());
    out += d == defs.end() ? it->str() : d->second;
    last = it->position() + it->length();
  }
  return out + text.substr(last);
}

// Checks every loop of `source` against the body's straight stages; returns the loops' count.
int check_loops(const Graph& graph, const KernelPlan& plan) {
  const std::string source = emit_cuda(graph, plan, "m");
  emit::Module m(graph, plan);
  const emit::Body body = emit::build_body(m);
  const auto defs = buffer_macros(source);
  const auto table = layer_tables(source);
  for (size_t k = 0; k < body.loops.size(); ++k) {
    const LayerLoop& l = body.loops[k];
    const std::string name = str_cat("mono_layers", k);
    for (int j = 0; j < l.period; ++j) {
      // The stage's item loop in the loop's text (indented two more).
      const std::string head = str_cat("    // ---- stage ", l.first + j, " + ", l.period, " * layer ----\n");
      const size_t at = source.find(head);
      EXPECT_NE(at, std::string::npos) << head;
      if (at == std::string::npos) continue;
      const size_t from = source.find("    for (int item", at), to = source.find("\n    }\n", from) + 7;
      std::string text;
      std::stringstream lines(source.substr(from, to - from));
      for (std::string line; std::getline(lines, line);) text += line.substr(2) + "\n";
      for (int r = 0; r < l.repeats; ++r) {
        SCOPED_TRACE(str_cat("loop ", k, ", stage ", l.first + j, ", repeat ", r));
        std::string unrolled = text;
        std::regex cell(name + R"(\[layer\]\[(\d+)\])");
        std::string put;
        size_t last = 0;
        for (auto it = std::sregex_iterator(unrolled.begin(), unrolled.end(), cell); it != std::sregex_iterator(); ++it) {
          put += unrolled.substr(last, it->position() - last);
          put += table.at(name).at(r).at(std::stoul((*it)[1]));
          last = it->position() + it->length();
        }
        put += unrolled.substr(last);
        const int s = l.first + r * l.period + j;
        EXPECT_EQ(expand(put, defs), expand(body.item_loops[s], defs));
      }
    }
  }
  return static_cast<int>(body.loops.size());
}

TEST(LayerLoops, EachRepeatRunsItsStagesItemLoop) {
  int loops = 0;
  for_each_tiny_plan([&](const Graph& g, const KernelPlan& plan) { loops += check_loops(g, plan); });
  EXPECT_GT(loops, 10);  // the tiny transformers have two layers, the CNNs repeated blocks
}

// Five identical blocks, each a GEMM whose output the next reads, after a Relu of the input (so
// that every block reads the arena): the first four run as one loop (the fifth writes the
// caller's output, and a kernel's last stage is never in a loop) whose table holds each block's
// weights and activations; the kernel makes 3 calls, so it inlines its group functions.
TEST(LayerLoops, IdenticalBlocksRunAsOneLoopOverATable) {
  std::string text = "graph g (opset 20) {\n  input %in: f32[128,256]\n  %x0 = Relu(%in)\n";
  for (int i = 0; i < 5; ++i)
    text += str_cat("  const %w", i, ": f32[256,256] = <65536 elements>\n  %m", i, " = MatMul(%x", i, ", %w", i, ")\n  %x",
                    i + 1, " = Relu(%m", i, ")\n");
  text += "  output %x5\n}\n";
  auto g = ir_graph(text);
  const KernelPlan plan = plan_kernel(*g, fp16_options());
  const std::string source = emit_cuda(*g, plan, "m");
  EXPECT_NE(source.find("stages 1 to 4: 4 repeats of 1 stage"), std::string::npos) << source;
  EXPECT_EQ(check_loops(*g, plan), 1);
  const auto table = layer_tables(source);
  ASSERT_EQ(table.count("mono_layers0"), 1u);
  ASSERT_EQ(table.at("mono_layers0").size(), 4u);
  for (int r = 1; r < 4; ++r) EXPECT_NE(table.at("mono_layers0")[r], table.at("mono_layers0")[r - 1]);
  EXPECT_EQ(kernel_calls(*g, plan), 3);
  EXPECT_TRUE(plan.inline_groups);
  EXPECT_NE(source.find("__forceinline__ void g1_mat_mul"), std::string::npos);
}

// A kernel whose text would call its group functions more than kInlineCallLimit times (a chain
// of GEMMs, each of another width: no loop) keeps them out of line unless told otherwise; the
// count is the emitter's.
TEST(LayerLoops, KernelsOfManyCallsKeepTheirFunctionsOutOfLine) {
  const int n = kInlineCallLimit + 1;
  std::string text = "graph g (opset 20) {\n  input %in: f32[8,8]\n  %x0 = Relu(%in)\n";
  for (int i = 0; i < n; ++i)
    text += str_cat("  const %w", i, ": f32[", 8 + i, ",", 9 + i, "] = <", (8 + i) * (9 + i), " elements>\n  %x", i + 1,
                    " = MatMul(%x", i, ", %w", i, ")\n");
  text += str_cat("  output %x", n, "\n}\n");
  auto g = ir_graph(text);
  PlanOptions po;
  const KernelPlan plan = plan_kernel(*g, po);
  EXPECT_EQ(kernel_calls(*g, plan), n + 1);
  EXPECT_FALSE(plan.inline_groups);
  EXPECT_NE(emit_cuda(*g, plan, "m").find("static __device__ __noinline__ void g1_mat_mul"), std::string::npos);
  po.settings.inline_groups = 1;
  EXPECT_TRUE(plan_kernel(*g, po).inline_groups);
}

// Tables live in constant memory: a loop whose table would pass emit::kLayerTableBytes is printed
// as straight stages instead (2000 repeats of a GEMM stage with its weights and activations in the
// table pass 32 KB; 100 repeats fit).
TEST(LayerLoops, ALoopWhoseTableWouldNotFitStaysStraight) {
  auto blocks = [](int n) {
    std::string text = "graph g (opset 20) {\n  input %in: f32[64,64]\n  %x0 = Relu(%in)\n";
    for (int i = 0; i < n; ++i)
      text += str_cat("  const %w", i, ": f32[64,64] = <4096 elements>\n  %x", i + 1, " = MatMul(%x", i, ", %w", i, ")\n");
    return ir_graph(text + str_cat("  output %x", n, "\n}\n"));
  };
  for (int n : {101, 2001}) {
    SCOPED_TRACE(n);
    auto g = blocks(n);
    const std::string source = emit_cuda(*g, plan_kernel(*g, fp16_options()), "m");
    size_t bytes = 0;
    for (const auto& [name, rows] : layer_tables(source)) bytes += rows.size() * rows.at(0).size() * sizeof(long long);
    EXPECT_LE(bytes, emit::kLayerTableBytes);
    EXPECT_EQ(source.find("repeats of") != std::string::npos, n < 2000);
  }
}

// kernel_calls counts every group-function call mono_main's text makes (an unfused attention
// group makes three), for every tiny model in both precisions.
TEST(LayerLoops, KernelCallsCountTheCallsInTheText) {
  for_each_tiny_plan([](const Graph& g, const KernelPlan& plan) {
    const std::string source = emit_cuda(g, plan, "m");
    const std::string body = source.substr(source.find(" mono_main("));
    std::regex call(R"(\bg\d+_\w+\()");
    EXPECT_EQ(kernel_calls(g, plan), std::distance(std::sregex_iterator(body.begin(), body.end(), call), std::sregex_iterator()));
  });
}

}  // namespace
}  // namespace mono
