// Exporters build attention masks and broadcasts from constants (IsNaN/Where/Expand/Equal on
// constant tensors). Once constant_folding has evaluated them, many operations they feed are
// no-ops: adding an all-zero mask, multiplying by ones, Where on a uniform condition, Expand
// or Reshape to the shape the tensor already has. Each is replaced by its data input, when
// that input already has exactly the node's output type.
#include "compiler/ops/transpose.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace mono {

// The input of `n` that `n` passes through unchanged, or null.
static Value* passthrough(const Node& n) {
  const Value* out = n.outputs.empty() ? nullptr : n.outputs[0];
  if (!out) return nullptr;
  auto same = [&](Value* v) { return v && !v->is_constant() && v->type == out->type ? v : nullptr; };
  Value* a = n.input(0);
  Value* b = n.input(1);
  switch (n.op) {
    case OpKind::kAdd:
      if (is_constant_near(b, 0.0, 0.0)) return same(a);
      if (is_constant_near(a, 0.0, 0.0)) return same(b);
      return nullptr;
    case OpKind::kSub:
      return is_constant_near(b, 0.0, 0.0) ? same(a) : nullptr;
    case OpKind::kMul:
      if (is_constant_near(b, 1.0, 0.0)) return same(a);
      if (is_constant_near(a, 1.0, 0.0)) return same(b);
      return nullptr;
    case OpKind::kDiv:
      return is_constant_near(b, 1.0, 0.0) ? same(a) : nullptr;
    case OpKind::kWhere: {
      Value* cond = a;
      if (is_constant_near(cond, 1.0, 0.0)) return same(n.input(1));
      if (is_constant_near(cond, 0.0, 0.0)) return same(n.input(2));
      return nullptr;
    }
    case OpKind::kExpand:
    case OpKind::kReshape:
    case OpKind::kSqueeze:
    case OpKind::kUnsqueeze:
    case OpKind::kFlatten:
      return same(a);
    case OpKind::kTranspose: {
      const std::vector<int64_t> p = transpose_perm(n);  // an identity permutation is a view
      for (size_t i = 0; i < p.size(); ++i)
        if (p[i] != static_cast<int64_t>(i)) return nullptr;
      return same(a);
    }
    case OpKind::kConcat:
      return n.num_inputs() == 1 ? same(a) : nullptr;
    default:
      return nullptr;
  }
}

bool constant_masks(Graph& g) {
  bool changed = false;
  for (const auto& n : g.nodes()) {
    if (n->outputs.size() != 1) continue;
    if (Value* v = passthrough(*n)) {
      forward_output(g, n.get(), 0, v);
      changed = true;
    }
  }
  if (changed) g.remove_dead_code();
  return changed;
}

}  // namespace mono
