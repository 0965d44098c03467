// Shapes are static in Mono, so Shape(x) and Size(x) are constants: replace them, and let
// constant_folding collapse the Gather/Concat/Unsqueeze/Cast chains that exporters build on them.
#include "compiler/ops/infer.h"

#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace mono {

bool fold_shape_arithmetic(Graph& g) {
  bool changed = false;
  for (const auto& n : g.nodes()) {
    if ((n->op != OpKind::kShape && n->op != OpKind::kSize) || !n->outputs[0]) continue;
    Tensor value = n->op == OpKind::kShape ? shape_node_value(*n) : Tensor::from_ints({}, {n->inputs[0]->type.numel()});
    Value* c = g.add_constant(n->outputs[0]->name + ".value", std::move(value));
    forward_output(g, n.get(), 0, c);
    changed = true;
  }
  if (changed) g.remove_dead_code();
  return changed;
}

}  // namespace mono
