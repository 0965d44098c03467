#include "compiler/driver/model.h"

#include "compiler/reference/interpreter.h"

namespace mono {

LoadedModel load_model(const std::string& path, const ModelOptions& options) {
  LoadResult loaded = load_onnx(path, options.load);
  LoadedModel m;
  m.graph = std::move(loaded.graph);
  m.notes = std::move(loaded.notes);
  m.nodes_loaded = m.graph->num_nodes();
  if (options.simplify) {
    SimplifyOptions so;
    so.dump = options.dump_passes;
    so.skip = options.skip_passes;
    m.passes = simplify(*m.graph, so);
  }
  return m;
}

int calibrate(const Graph& g, const std::vector<Tensor>& inputs, PlanOptions* plan) {
  if (plan->settings.precision != Precision::kF16) return 0;
  plan->ranges = float_ranges(g, inputs, &plan->nonnegative);
  int out_of_range = 0;
  for (const auto& [v, r] : plan->ranges)
    if (r != 0.0f && (r < kMinFp16Range || r > kMaxFp16Range)) ++out_of_range;
  return out_of_range;
}

std::string model_label(const std::string& path) {
  std::string p = path;
  while (!p.empty() && p.back() == '/') p.pop_back();
  size_t slash = p.rfind('/');
  std::string base = slash == std::string::npos ? p : p.substr(slash + 1);
  if (base == "model.onnx" && slash != std::string::npos && slash > 0) {
    std::string dir = p.substr(0, slash);
    size_t s2 = dir.rfind('/');
    return s2 == std::string::npos ? dir : dir.substr(s2 + 1);
  }
  return base;
}

}  // namespace mono
