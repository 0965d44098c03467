// Identity, inference Dropout and same-type Cast compute nothing: readers of their output read
// their input instead.
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

bool remove_identity(Graph& g) {
  bool changed = false;
  for (const auto& n : g.nodes()) {
    if (!n->outputs[0] || !is_noop(*n)) continue;
    if (n->op == OpKind::kDropout && n->outputs.size() > 1 && n->outputs[1]) continue;
    forward_output(g, n.get(), 0, n->inputs[0]);
    changed = true;
  }
  if (changed) g.remove_dead_code();
  return changed;
}

}  // namespace mono
