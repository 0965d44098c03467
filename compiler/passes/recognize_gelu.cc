// Exporters spell GELU out in elementary ops. Two forms are recognised, in any order of the
// multiplications:
//   erf:  x * 0.5 * (1 + erf(x / sqrt(2)))           (or x * (1/sqrt 2) inside erf)
//   tanh: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))   (x^3 as Pow(x, 3) or x*x*x)
// The whole expression becomes one Gelu node (approximate = "none" or "tanh").
#include <algorithm>

#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace mono {
namespace {

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kTol = 1e-4;

// The leaves of the tree of Mul nodes rooted at `v`.
void mul_factors(Value* v, std::vector<Value*>* factors) {
  if (Node* m = produced_by(v, OpKind::kMul)) {
    mul_factors(m->inputs[0], factors);
    mul_factors(m->inputs[1], factors);
  } else {
    factors->push_back(v);
  }
}

// If `v` = Add(1, t) or Add(t, 1) with t produced by `op`, returns that node.
Node* one_plus(Value* v, OpKind op) {
  Node* add = produced_by(v, OpKind::kAdd);
  if (!add) return nullptr;
  for (int i = 0; i < 2; ++i) {
    if (is_constant_near(add->inputs[1 - i], 1.0, kTol))
      if (Node* t = produced_by(add->inputs[i], op)) return t;
  }
  return nullptr;
}

// Removes one factor equal to `x` (pointer) or to a constant near `c`; false if absent.
bool take(std::vector<Value*>* f, Value* x) {
  auto it = std::find(f->begin(), f->end(), x);
  if (it == f->end()) return false;
  f->erase(it);
  return true;
}
bool take_const(std::vector<Value*>* f, double c) {
  for (auto it = f->begin(); it != f->end(); ++it) {
    if (is_constant_near(*it, c, kTol)) {
      f->erase(it);
      return true;
    }
  }
  return false;
}

// erf(x / sqrt2) or erf(x * (1/sqrt2)): returns x.
Value* erf_argument(Node* erf) {
  Value* q = erf->inputs[0];
  if (Node* d = produced_by(q, OpKind::kDiv))
    return is_constant_near(d->inputs[1], kSqrt2, kTol) ? d->inputs[0] : nullptr;
  std::vector<Value*> f;
  mul_factors(q, &f);
  if (f.size() != 2 || !take_const(&f, 1.0 / kSqrt2)) return nullptr;
  return f[0];
}

// sqrt(2/pi) * (x + 0.044715 * x^3): returns x.
Value* tanh_argument(Node* tanh) {
  std::vector<Value*> f;
  mul_factors(tanh->inputs[0], &f);
  if (f.size() != 2 || !take_const(&f, kSqrt2OverPi)) return nullptr;
  Node* sum = produced_by(f[0], OpKind::kAdd);
  if (!sum) return nullptr;
  for (int i = 0; i < 2; ++i) {
    Value* x = sum->inputs[i];
    std::vector<Value*> cube;
    mul_factors(sum->inputs[1 - i], &cube);
    if (!take_const(&cube, 0.044715)) continue;
    if (cube.size() == 1) {
      Node* pow = produced_by(cube[0], OpKind::kPow);
      if (pow && pow->inputs[0] == x && is_constant_near(pow->inputs[1], 3.0, 0.0)) return x;
    } else if (cube.size() == 3 && std::all_of(cube.begin(), cube.end(), [&](Value* v) { return v == x; })) {
      return x;
    }
  }
  return nullptr;
}

// If `y` is a GELU of some x, returns x and sets the approximation.
Value* match_gelu(Value* y, std::string* approximate) {
  std::vector<Value*> f;
  mul_factors(y, &f);
  if (f.size() != 3) return nullptr;
  for (Value* candidate : f) {
    Value* x = nullptr;
    if (Node* erf = one_plus(candidate, OpKind::kErf)) {
      x = erf_argument(erf);
      *approximate = "none";
    } else if (Node* tanh = one_plus(candidate, OpKind::kTanh)) {
      x = tanh_argument(tanh);
      *approximate = "tanh";
    }
    if (!x) continue;
    std::vector<Value*> rest = f;
    take(&rest, candidate);
    if (take(&rest, x) && take_const(&rest, 0.5) && rest.empty()) return x;
  }
  return nullptr;
}

}  // namespace

bool recognize_gelu(Graph& g) {
  bool changed = false;
  for (Node* m : nodes_of(g, OpKind::kMul)) {
    Value* y = m->outputs[0];
    std::string approximate;
    Value* x = match_gelu(y, &approximate);
    if (!x || x->type != y->type || !is_float(x->type.dtype)) continue;
    replace_with_unary(g, m, OpKind::kGelu, ".gelu", x)->attrs["approximate"] = approximate;
    changed = true;
  }
  if (changed) g.remove_dead_code();
  return changed;
}

}  // namespace mono
