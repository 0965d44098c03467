// Identity, inference Dropout and same-type Cast compute nothing: readers of their output read
// their input instead. An inference Dropout's mask is all true (ones): it becomes a constant.
#include <algorithm>

#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace mono {

static bool is_noop(const Node& n) {
  switch (n.op) {
    case OpKind::kIdentity:
      return true;
    case OpKind::kDropout:
      // The optional mask output must be unused (the loader gives unwanted outputs no value).
      return n.outputs.size() < 2 || n.outputs[1] == nullptr;
    case OpKind::kCast:
      return n.outputs[0] && n.inputs[0]->type.dtype == n.outputs[0]->type.dtype;
    default:
      return false;
  }
}

// A Dropout whose mask is wanted, in inference (training_mode absent or a constant; shape
// inference refuses a true one): its mask as a constant, or null.
static Value* inference_mask(Graph& g, const Node& n) {
  if (n.op != OpKind::kDropout || n.outputs.size() < 2 || !n.outputs[1]) return nullptr;
  if (n.input(2) && !n.input(2)->is_constant()) return nullptr;
  const Value* mask = n.outputs[1];
  return g.add_constant(mask->name + ".ones",
                        Tensor::from_floats(mask->type.shape, std::vector<float>(mask->type.numel(), 1.0f), mask->type.dtype));
}

bool remove_identity(Graph& g) {
  bool changed = false;
  for (const auto& n : g.nodes()) {
    if (!n->outputs[0]) continue;
    if (Value* mask = inference_mask(g, *n)) {
      const bool output = std::count(g.outputs.begin(), g.outputs.end(), n->outputs[1]) > 0;
      forward_output(g, n.get(), 1, mask);
      if (output) std::swap(mask->name, n->outputs[1]->name);  // the graph output keeps its name
      forward_output(g, n.get(), 0, n->inputs[0]);
      changed = true;
      continue;
    }
    if (!is_noop(*n)) continue;
    if (n->op == OpKind::kDropout && n->outputs.size() > 1 && n->outputs[1]) continue;
    forward_output(g, n.get(), 0, n->inputs[0]);
    changed = true;
  }
  if (changed) g.remove_dead_code();
  return changed;
}

}  // namespace mono
