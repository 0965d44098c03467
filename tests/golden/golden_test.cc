// Golden IR-in/IR-out tests of the simplification passes (see tests/golden/README.md).
#include <dirent.h>
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "compiler/ir/printer.h"
#include "compiler/ops/infer.h"
#include "compiler/passes/passes.h"
#include "compiler/reference/interpreter.h"

namespace mono {
namespace {

struct GoldenCase {
  std::string file, name, pass, input, expect;
};

std::vector<GoldenCase> load_cases() {
  std::vector<GoldenCase> cases;
  const std::string dir = std::string(MONO_SOURCE_DIR) + "/tests/golden";
  DIR* d = opendir(dir.c_str());
  std::vector<std::string> files;
  while (dirent* e = d ? readdir(d) : nullptr) {
    std::string n = e->d_name;
    if (n.size() > 5 && n.substr(n.size() - 5) == ".test") files.push_back(n);
  }
  if (d) closedir(d);
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    std::ifstream in(dir + "/" + f);
    std::string line;
    GoldenCase* c = nullptr;
    bool in_expect = false;
    while (std::getline(in, line)) {
      if (line.rfind("# case: ", 0) == 0) {
        cases.push_back({f, line.substr(8), "", "", ""});
        c = &cases.back();
        in_expect = false;
      } else if (c && line.rfind("# pass: ", 0) == 0) {
        c->pass = line.substr(8);
      } else if (c && line == "# expect:") {
        in_expect = true;
      } else if (c) {
        (in_expect ? c->expect : c->input) += line + "\n";
      }
    }
  }
  return cases;
}

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
  ASSERT_TRUE(run_pass_by_name(c.pass, *g, &changed)) << "no pass named " << c.pass;
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

TEST(Golden, EveryPassHasCases) {
  std::set<std::string> covered;
  for (const GoldenCase& c : load_cases()) covered.insert(c.pass);
  for (const char* pass : {"remove_identity", "fold_shape_arithmetic", "constant_folding", "constant_masks",
                           "canonicalize", "fold_reshape_transpose", "fold_batch_norm", "recognize_gelu", "recognize_layer_norm"})
    EXPECT_TRUE(covered.count(pass)) << "no golden case for " << pass;
}

}  // namespace
}  // namespace mono
