// Nodes whose inputs are all constants are evaluated at compile time with the CPU reference;
// their outputs become constants. Constant nodes become constants too.
#include "compiler/ops/infer.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace mono {

// Results above this size stay computed at run time (folding would only bloat the weights)...
constexpr int64_t kMaxFoldedElements = int64_t{1} << 24;

// ...unless the node only moves or converts its data input's elements, makes no more of them
// than it reads, and is that constant's one reader. Such a result replaces the constant it comes
// from with no more elements (a widening Cast may take more bytes, as the run-time copy would; a
// constant read elsewhere too would stay beside a second copy). Left to run time it is the worst
// case: ALBERT-xxlarge's two 4096x16384 FFN weights were transposed into the arena on every run
// (2 x 134 MB), and the MatMuls reading them lost the packed-weight GEMM path.
static bool moves_elements(OpKind op) {
  switch (op) {
    case OpKind::kTranspose:
    case OpKind::kReshape:
    case OpKind::kFlatten:
    case OpKind::kSqueeze:
    case OpKind::kUnsqueeze:
    case OpKind::kIdentity:
    case OpKind::kCast:
    case OpKind::kSlice:
      return true;
    default:
      return false;
  }
}

static bool foldable(const Graph& g, const Node& n) {
  bool has_input = false;
  for (const Value* in : n.inputs) {
    if (!in) continue;
    if (!in->is_constant()) return false;
    has_input = true;
  }
  // A node without inputs (Constant, or a ConstantOfShape-less generator) folds too.
  if (!has_input && n.op != OpKind::kConstant) return false;
  const Value* in = has_input && moves_elements(n.op) ? n.inputs[0] : nullptr;
  for (const Value* out : n.outputs) {
    if (!out || out->type.numel() <= kMaxFoldedElements) continue;
    // (the readers are looked up only here: g.users scans the graph)
    if (!in || out->type.numel() > in->type.numel() || g.users(in).size() != 1 || g.is_graph_output(in)) return false;
  }
  return true;
}

bool constant_folding(Graph& g) {
  bool changed = false;
  for (const auto& n : g.nodes()) {
    if (!foldable(g, *n)) continue;
    std::vector<const Tensor*> in;
    for (const Value* v : n->inputs) in.push_back(v ? v->constant.get() : nullptr);
    std::vector<Tensor> outs = evaluate_node(*n, in);
    for (size_t i = 0; i < outs.size(); ++i) {
      Value* out = n->outputs[i];
      if (!out) continue;
      Value* c = g.add_constant(out->name + ".folded", std::move(outs[i]));
      // The constant keeps the original name (the dead value gets the other one).
      std::swap(c->name, out->name);
      forward_output(g, n.get(), static_cast<int>(i), c);
    }
    changed = true;
  }
  if (changed) g.remove_dead_code();
  return changed;
}

}  // namespace mono
