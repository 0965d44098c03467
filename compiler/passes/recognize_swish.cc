// Exporters spell SiLU (EfficientNet's activation) as Mul(x, Sigmoid(x)). Mul reads x twice, so
// the CUDA planner could not make it an epilogue step of x's producer: each one ran as a stage
// of its own (efficientnet-b0: 48 of its 164 stages). Mul(x, Sigmoid(x)) and
// Mul(x, Sigmoid(Mul(c, x))) with a scalar constant c, in either operand order, become one
// Swish node (alpha 1, or c).
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace mono {
namespace {

// If `s` = Sigmoid(x) or Sigmoid(c * x) (c a scalar constant, either side), returns alpha (1 or c).
bool sigmoid_of(Value* s, Value* x, float* alpha) {
  Node* sig = produced_by(s, OpKind::kSigmoid);
  if (!sig) return false;
  Value* z = sig->inputs[0];
  if (z == x) {
    *alpha = 1.0f;
    return true;
  }
  Node* m = produced_by(z, OpKind::kMul);
  if (!m) return false;
  for (int i = 0; i < 2; ++i) {
    const Value* c = m->inputs[1 - i];
    if (m->inputs[i] == x && c->is_constant() && c->type.numel() == 1 && is_float(c->type.dtype)) {
      *alpha = static_cast<float>(c->constant->as_double(0));
      return true;
    }
  }
  return false;
}

}  // namespace

bool recognize_swish(Graph& g) {
  bool changed = false;
  for (Node* m : nodes_of(g, OpKind::kMul)) {
    const Value* y = m->outputs[0];
    for (int i = 0; i < 2; ++i) {
      Value* x = m->inputs[i];
      float alpha = 1.0f;
      if (!sigmoid_of(m->inputs[1 - i], x, &alpha) || x->type != y->type || !is_float(x->type.dtype)) continue;
      replace_with_unary(g, m, OpKind::kSwish, ".swish", x)->attrs["alpha"] = alpha;
      changed = true;
      break;
    }
  }
  if (changed) g.remove_dead_code();
  return changed;
}

}  // namespace mono
