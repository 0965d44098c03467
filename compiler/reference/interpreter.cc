#include "compiler/reference/interpreter.h"

#include <chrono>
#include <cmath>
#include <unordered_map>

#include "compiler/ops/infer.h"
#include "compiler/support/error.h"

namespace mono {

std::vector<Tensor> run_reference(const Graph& graph, const std::vector<Tensor>& inputs,
                                  RunStats* stats, const Observer& observe) {
  auto start = std::chrono::steady_clock::now();
  if (inputs.size() != graph.inputs.size())
    user_error("the model takes ", graph.inputs.size(), " inputs; ", inputs.size(), " given");
  std::unordered_map<const Value*, Tensor> live;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value* v = graph.inputs[i];
    if (inputs[i].type() != v->type)
      user_error("input '", v->name, "' must be ", v->type.str(), "; got ", inputs[i].type().str());
    live[v] = inputs[i];
  }
  // Last node index that reads each value; graph outputs are never freed.
  std::unordered_map<const Value*, size_t> last_use;
  const auto& nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const Value* in : nodes[i]->inputs)
      if (in) last_use[in] = i;
  for (const Value* out : graph.outputs) last_use[out] = SIZE_MAX;

  size_t live_bytes = 0, peak = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = *nodes[i];
    std::vector<const Tensor*> in(node.inputs.size(), nullptr);
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const Value* v = node.inputs[k];
      if (!v) continue;
      if (v->is_constant()) {
        in[k] = v->constant.get();
        continue;
      }
      auto it = live.find(v);
      MONO_CHECK(it != live.end(), "value ", v->name, " read by ", node.describe(), " is not computed");
      in[k] = &it->second;
    }
    std::vector<Tensor> outs = evaluate_node(node, in);
    for (size_t k = 0; k < outs.size(); ++k) {
      if (!node.outputs[k]) continue;
      if (observe) observe(node.outputs[k], outs[k]);
      live_bytes += outs[k].nbytes();
      live[node.outputs[k]] = std::move(outs[k]);
    }
    peak = std::max(peak, live_bytes);
    for (const Value* v : node.inputs) {
      if (!v || v->is_constant()) continue;
      auto lu = last_use.find(v);
      if (lu != last_use.end() && lu->second == i) {
        auto it = live.find(v);
        if (it != live.end()) {
          live_bytes -= std::min(live_bytes, it->second.nbytes());
          live.erase(it);
        }
      }
    }
  }
  std::vector<Tensor> results;
  for (const Value* out : graph.outputs) {
    if (out->is_constant()) {
      results.push_back(*out->constant);
      continue;
    }
    auto it = live.find(out);
    MONO_CHECK(it != live.end(), "graph output ", out->name, " was not computed");
    results.push_back(it->second);
  }
  if (stats) {
    stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    stats->peak_bytes = peak;
  }
  return results;
}

}  // namespace mono

namespace mono {

// Calibration reads every float of the model (its weights included): fp32 tensors without
// the per-element dtype dispatch of as_double.
static float max_abs(const Tensor& t) {
  float m = 0;
  if (t.dtype() == DType::kF32) {
    const float* x = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      const float a = std::fabs(x[i]);
      if (a > m && std::isfinite(a)) m = a;
    }
    return m;
  }
  for (int64_t i = 0; i < t.numel(); ++i) {
    float a = std::fabs(static_cast<float>(t.as_double(i)));
    if (a > m && std::isfinite(a)) m = a;
  }
  return m;
}

static bool all_nonnegative(const Tensor& t) {
  if (t.dtype() == DType::kF32) {
    const float* x = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i)
      if (!(x[i] >= 0)) return false;  // NaN too
    return true;
  }
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!(t.as_double(i) >= 0)) return false;  // NaN too
  return true;
}

std::map<const Value*, float> float_ranges(const Graph& graph, const std::vector<Tensor>& inputs,
                                          std::set<const Value*>* nonnegative) {
  std::map<const Value*, float> ranges;
  auto record = [&](const Value* v, const Tensor& t) {
    if (!is_float(t.dtype())) return;
    ranges[v] = max_abs(t);
    if (nonnegative && all_nonnegative(t)) nonnegative->insert(v);
  };
  for (size_t i = 0; i < graph.inputs.size() && i < inputs.size(); ++i) record(graph.inputs[i], inputs[i]);
  for (const Value* c : graph.constants()) record(c, *c->constant);
  run_reference(graph, inputs, nullptr, record);
  return ranges;
}

}  // namespace mono
