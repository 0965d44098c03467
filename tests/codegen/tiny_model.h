// Test helpers of the code generator's tests: a tiny model of tests/data/models, loaded and
// simplified (every such test's starting point), or a small graph in the textual IR.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <memory>

#include "compiler/codegen/plan.h"
#include "compiler/frontend/onnx_loader.h"
#include "compiler/ir/printer.h"
#include "compiler/ops/infer.h"
#include "compiler/passes/passes.h"
#include "compiler/support/error.h"
#include "tests/lib/test_models.h"

namespace mono {

inline LoadResult load_tiny(const std::string& model) {
  LoadResult loaded = load_onnx(std::string(MONO_SOURCE_DIR) + "/tests/data/models/" + model + "/model.onnx");
  simplify(*loaded.graph);
  return loaded;
}

// Calls `check(graph, plan)` for every tiny model in both precisions.
template <class Check>
void for_each_tiny_plan(Check check) {
  for (const std::string& model : test::tiny_models()) {
    for (Precision p : {Precision::kF32, Precision::kF16}) {
      SCOPED_TRACE(str_cat(model, p == Precision::kF16 ? " fp16" : " fp32"));
      LoadResult loaded = load_tiny(model);
      PlanOptions po;
      po.settings.precision = p;
      check(*loaded.graph, plan_kernel(*loaded.graph, po));
    }
  }
}

// Plan options for an fp16 kernel (the default context otherwise).
inline PlanOptions fp16_options() {
  PlanOptions po;
  po.settings.precision = Precision::kF16;
  return po;
}

// A small graph in the textual IR with made-up weights, shapes inferred.
inline std::unique_ptr<Graph> ir_graph(const std::string& text) {
  ParseOptions parse;
  parse.fill_elided = true;
  auto g = parse_graph(text, parse);
  infer_shapes(*g);
  return g;
}

// The rows of each layer loop's table in a generated source (`mono_layers<k>`: its values as
// printed, row by row).
inline std::map<std::string, std::vector<std::vector<std::string>>> layer_tables(const std::string& source) {
  std::map<std::string, std::vector<std::vector<std::string>>> t;
  std::regex table(R"(__constant__ long long (mono_layers\d+)\[\d+\]\[\d+\] = \{\n([^;]*)\};)");
  std::regex row(R"(\{([^}]*)\})");
  for (auto it = std::sregex_iterator(source.begin(), source.end(), table); it != std::sregex_iterator(); ++it) {
    const std::string rows = (*it)[2];
    for (auto r = std::sregex_iterator(rows.begin(), rows.end(), row); r != std::sregex_iterator(); ++r) {
      std::vector<std::string> cells;
      std::stringstream ss((*r)[1].str());
      for (std::string c; std::getline(ss, c, ',');) cells.push_back(c.substr(c.find_first_not_of(' ')));
      t[(*it)[1]].push_back(cells);
    }
  }
  return t;
}

// The stages a generated source's layer loops run beyond their text (each loop's stages, once per
// repeat after the first).
inline long repeated_stages(const std::string& source) {
  std::regex loop(R"(stages \d+ to \d+: (\d+) repeats of (\d+) stage)");
  long n = 0;
  for (auto it = std::sregex_iterator(source.begin(), source.end(), loop); it != std::sregex_iterator(); ++it)
    n += (std::stol((*it)[1]) - 1) * std::stol((*it)[2]);
  return n;
}

}  // namespace mono
