// Shapes are static in Mono, so Shape(x) is a constant: replace it, and let constant_folding
// collapse the Gather/Concat/Unsqueeze/Cast chains that exporters build on it.
#include "compiler/ops/infer.h"

#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace mono {

bool fold_shape_arithmetic(Graph& g) {
  bool changed = false;
  for (const auto& n : g.nodes()) {
    if (n->op != OpKind::kShape || !n->outputs[0]) continue;
    Value* c = g.add_constant(n->outputs[0]->name + ".value", shape_node_value(*n));
    forward_output(g, n.get(), 0, c);
    changed = true;
  }
  if (changed) g.remove_dead_code();
  return changed;
}

}  // namespace mono
