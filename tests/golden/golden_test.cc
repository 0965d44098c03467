// Golden IR-in/IR-out tests of the simplification passes (see tests/golden/README.md).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "compiler/ir/printer.h"
#include "compiler/support/error.h"
#include "tests/golden/golden_file.h"
#include "compiler/ops/infer.h"
#include "compiler/passes/passes.h"
#include "compiler/reference/interpreter.h"

namespace mono {
namespace {

using GoldenCase = golden::Case;

std::vector<GoldenCase> load_cases() { return golden::load_cases(std::string(MONO_SOURCE_DIR) + "/tests/golden"); }

std::unique_ptr<Graph> parse_and_infer(const std::string& text) {
  auto g = parse_graph(text);
  infer_shapes(*g);
  verify_graph(*g, /*internal=*/false);
  return g;
}

std::string canonical(const Graph& g) {
  PrintOptions p;
  p.node_names = false;
  return graph_to_string(g, p);
}

std::vector<Tensor> random_inputs(const Graph& g) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<Tensor> ins;
  for (const Value* v : g.inputs) {
    std::vector<float> vals(v->type.numel());
    for (float& x : vals) x = dist(rng);
    ins.push_back(Tensor::from_floats(v->type.shape, vals, v->type.dtype));
  }
  return ins;
}

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, PassGivesExpectedIrAndSameResults) {
  const GoldenCase& c = GetParam();
  auto g = parse_and_infer(c.input);
  auto original = parse_and_infer(c.input);
  bool changed = false;
  ASSERT_TRUE(run_pass_by_name(c.field("pass"), *g, &changed)) << "no pass named " << c.field("pass");
  g->remove_dead_code();
  verify_graph(*g, /*internal=*/true);
  auto expected = parse_and_infer(c.expect);
  EXPECT_EQ(canonical(*g), canonical(*expected)) << c.file << ": " << c.name;
  EXPECT_EQ(changed, canonical(*g) != canonical(*original)) << "the pass misreports whether it changed the graph";

  // The rewrite must compute what the input graph computes.
  std::vector<Tensor> ins = random_inputs(*original);
  std::vector<Tensor> want = run_reference(*original, ins);
  std::vector<Tensor> got = run_reference(*g, ins);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].type(), want[i].type());
    for (int64_t k = 0; k < got[i].numel(); ++k)
      EXPECT_NEAR(got[i].as_double(k), want[i].as_double(k), 1e-5 + 1e-5 * std::fabs(want[i].as_double(k)))
          << c.name << " output " << i << " element " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Passes, GoldenTest, ::testing::ValuesIn(load_cases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) { return info.param.name; });

// Every pass of the pipeline has golden cases in PASS.test. The list is the pipeline's own
// (simplification_pipeline(), which run_pass_by_name() looks names up in), so a new pass fails
// here until it has cases; no pass of it is exempt. convert_float_precision is not in the
// pipeline: it takes the target type, and it changes the graph's input and output types, so
// the same-results check above cannot apply; models_test runs it on every tiny model.
TEST(Golden, EveryPassHasCases) {
  std::set<std::string> covered;
  for (const GoldenCase& c : load_cases()) {
    covered.insert(c.field("pass"));
    EXPECT_EQ(c.file, c.field("pass") + ".test") << c.name << ": a case belongs in the file of its pass";
  }
  ASSERT_FALSE(simplification_pipeline().empty());
  for (const PipelinePass& pass : simplification_pipeline())
    EXPECT_TRUE(covered.count(pass.name)) << "no golden case for " << pass.name << " (tests/golden/"
                                          << pass.name << ".test)";
}

// SimplifyOptions::skip (--skip-pass) leaves one pass out and nothing else; an unknown pass name
// is refused rather than ignored.
TEST(Simplify, SkipLeavesOnePassOutAndRefusesUnknownNames) {
  const std::string text = R"(graph g (opset 20) {
  input %x: f32[1,1,4,4]
  const %w: f32[2,1,2,2] = [0.5, -1.0, 1.5, 2.0, -0.5, 0.25, 1.0, -2.0]
  %y = Conv(%x, %w) {kernel_shape=[2, 2], strides=[2, 2]}
  %z = Identity(%y)
  output %z
})";
  auto count = [](const Graph& g, OpKind op) {
    int n = 0;
    for (const auto& node : g.nodes()) n += node->op == op;
    return n;
  };
  auto all = parse_and_infer(text);
  simplify(*all);
  EXPECT_EQ(count(*all, OpKind::kConv), 0);
  EXPECT_EQ(count(*all, OpKind::kIdentity), 0);
  auto skipped = parse_and_infer(text);
  SimplifyOptions o;
  o.skip = {"patch_conv"};
  simplify(*skipped, o);
  EXPECT_EQ(count(*skipped, OpKind::kConv), 1);
  EXPECT_EQ(count(*skipped, OpKind::kIdentity), 0);  // the other passes still ran
  auto unknown = parse_and_infer(text);
  o.skip = {"no_such_pass"};
  EXPECT_THROW(simplify(*unknown, o), UserError);
}

// Above the folding size limit, a node that only moves a constant's elements (ALBERT-xxlarge's
// transposed 4096x16384 FFN weights) still folds: the weight it makes is no larger than the one
// it replaces. A node that would make more elements than it reads (Expand), or one whose weight
// has another reader (a second copy beside it), stays at run time.
TEST(ConstantFolding, MovesAWeightOfAnySizeButGrowsNone) {
  ParseOptions fill;
  fill.fill_elided = true;
  auto g = parse_graph(R"(graph g (opset 20) {
  input %x: f32[2,4096]
  input %r: f32[4097,4097]
  const %w: f32[4097,4096] = <16781312 elements>
  const %row: f32[1,4097] = <4097 elements>
  const %shape: i64[2] = [4097, 4097]
  %wt = Transpose(%w) {perm=[1, 0]}
  %y = MatMul(%x, %wt)
  %big = Expand(%row, %shape)
  %z = Add(%r, %big)
  output %y
  output %z
})", fill);
  infer_shapes(*g);
  auto find = [&](const std::string& name) -> const Value* {
    for (const auto& v : g->values())
      if (v->name == name) return v.get();
    return nullptr;
  };
  const Tensor w = *find("w")->constant;
  ASSERT_TRUE(constant_folding(*g));
  std::map<OpKind, int> ops;
  for (const auto& n : g->nodes()) ++ops[n->op];
  EXPECT_EQ(ops[OpKind::kTranspose], 0) << "the transposed weight is a constant now";
  EXPECT_EQ(ops[OpKind::kExpand], 1) << "a result larger than its input stays at run time";
  const Value* wt = find("wt");
  ASSERT_TRUE(wt && wt->is_constant());
  EXPECT_EQ(wt->type.shape, (Shape{4096, 4097}));
  EXPECT_EQ(find("w"), nullptr) << "the untransposed weight has no reader left";
  for (int64_t i : {int64_t{0}, int64_t{1}, int64_t{4095}})
    for (int64_t j : {int64_t{0}, int64_t{2}, int64_t{4096}})
      EXPECT_EQ(wt->constant->as_double(i * 4097 + j), w.as_double(j * 4096 + i)) << i << "," << j;

  auto shared = parse_graph(R"(graph g (opset 20) {
  input %x: f32[2,4096]
  input %ids: i64[3]
  const %w: f32[4097,4096] = <16781312 elements>
  %wt = Transpose(%w) {perm=[1, 0]}
  %y = MatMul(%x, %wt)
  %rows = Gather(%w, %ids) {axis=0}
  output %y
  output %rows
})", fill);
  infer_shapes(*shared);
  constant_folding(*shared);
  int transposes = 0;
  for (const auto& n : shared->nodes()) transposes += n->op == OpKind::kTranspose;
  EXPECT_EQ(transposes, 1) << "a weight with another reader is not copied";
}

// The IR text round-trips integers exactly over the whole int64 range (exporters write
// INT64_MAX as a Slice's "to the end"; a parse through double turned it into INT64_MIN).
TEST(IrText, IntegerConstantsRoundTripExactly) {
  const std::string text =
      "graph g (opset 17) {\n"
      "  input %x: f32[4]\n"
      "  const %big: i64[4] = [9223372036854775807, -9223372036854775808, 9007199254740993, -1]\n"
      "  const %i32: i32[2] = [2147483647, -2147483648]\n"
      "  %y = Identity(%x)\n"
      "  output %y\n"
      "}\n";
  auto g = parse_graph(text);
  const Tensor* big = nullptr;
  const Tensor* i32 = nullptr;
  for (const auto& v : g->values()) {
    if (v->name == "big") big = v->constant.get();
    if (v->name == "i32") i32 = v->constant.get();
  }
  ASSERT_TRUE(big && i32);
  EXPECT_EQ(big->to_int_vector(), (std::vector<int64_t>{INT64_MAX, INT64_MIN, 9007199254740993LL, -1}));
  EXPECT_EQ(i32->to_int_vector(), (std::vector<int64_t>{INT32_MAX, INT32_MIN}));
  PrintOptions p;
  p.max_constant_elements = 16;
  EXPECT_EQ(graph_to_string(*parse_graph(graph_to_string(*g, p)), p), graph_to_string(*g, p));
}

// Found by tests/fuzz (fuzz_ir_parser): a \x escape without two hex digits threw
// std::invalid_argument out of the parser (tuning fragments travel to workers in this text).
// It is a UserError now; a good escape still reads.
TEST(IrText, BadEscapesAreUserErrors) {
  for (const char* name : {"\"a\\xz?\"", "\"a\\x4\"", "\"\\x", "\"a\\xg0\""}) {
    const std::string text = std::string("graph g (opset 17) {\n  input %") + name + ": f32[4]\n}\n";
    EXPECT_THROW(parse_graph(text), UserError) << text;
  }
  auto g = parse_graph("graph g (opset 17) {\n  input %\"a\\x41\": f32[4]\n  output %\"a\\x41\"\n}\n");
  EXPECT_EQ(g->inputs[0]->name, "aA");
}

}  // namespace
}  // namespace mono
