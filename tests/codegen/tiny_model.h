// Test helpers of the code generator's tests: a tiny model of tests/data/models, loaded and
// simplified (every such test's starting point), or a small graph in the textual IR.
#pragma once

#include <string>

#include <memory>

#include "compiler/codegen/plan.h"
#include "compiler/frontend/onnx_loader.h"
#include "compiler/ir/printer.h"
#include "compiler/ops/infer.h"
#include "compiler/passes/passes.h"

namespace mono {

inline LoadResult load_tiny(const std::string& model) {
  LoadResult loaded = load_onnx(std::string(MONO_SOURCE_DIR) + "/tests/data/models/" + model + "/model.onnx");
  simplify(*loaded.graph);
  return loaded;
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

}  // namespace mono
