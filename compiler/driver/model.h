// From an ONNX file to a graph ready to plan: load it with the user's shape bindings,
// simplify it, and (fp16) calibrate its float ranges with the CPU reference. What mono-compile,
// mono-run and the tuner server share. Nothing here prints: the results carry the notes and
// statistics, and the tools print them.
#pragma once

#include <iosfwd>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/codegen/plan.h"
#include "compiler/frontend/onnx_loader.h"
#include "compiler/passes/passes.h"

namespace mono {

struct ModelOptions {
  LoadOptions load;
  bool simplify = true;
  std::ostream* dump_passes = nullptr;  // if set, the IR after every pass that changed it
  std::set<std::string> skip_passes;    // simplification passes not to run (--skip-pass)
};

struct LoadedModel {
  std::unique_ptr<Graph> graph;
  std::vector<std::string> notes;  // the front end's, e.g. "input 'x': dynamic batch dimension set to 1"
  size_t nodes_loaded = 0;         // before simplification
  std::vector<PassStat> passes;    // every pass run, in order (empty without simplification)
};

// Loads and (unless disabled) simplifies. Throws UserError naming the file and what is wrong.
LoadedModel load_model(const std::string& path, const ModelOptions& options);

// fp16 with fp32 fallback: for fp16 settings, sets plan->ranges to the largest |x| of every
// float tensor on `inputs` (the CPU reference) and returns how many of them lie outside fp16's
// range (the planner keeps those fp32); for fp32 settings does nothing and returns 0.
int calibrate(const Graph& g, const std::vector<Tensor>& inputs, PlanOptions* plan);

// A short name for a model path: "tiny-bert-opset20" for ".../tiny-bert-opset20/model.onnx".
std::string model_label(const std::string& path);

}  // namespace mono
