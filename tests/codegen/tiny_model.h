// Test helper of the code generator's tests: a tiny model of tests/data/models, loaded and
// simplified (every such test's starting point).
#pragma once

#include <string>

#include "compiler/frontend/onnx_loader.h"
#include "compiler/passes/passes.h"

namespace mono {

inline LoadResult load_tiny(const std::string& model) {
  LoadResult loaded = load_onnx(std::string(MONO_SOURCE_DIR) + "/tests/data/models/" + model + "/model.onnx");
  simplify(*loaded.graph);
  return loaded;
}

}  // namespace mono
