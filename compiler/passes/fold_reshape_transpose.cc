// Layout shuffles that exporters emit differently for the same model:
//   Reshape(Reshape(x))                      -> Reshape(x)
//   Transpose(Transpose(x, p), q)            -> Transpose(x, p∘q)   (dropped if identity)
//   Reshape(Transpose(Reshape(x)))           -> Transpose(x)  when both reshapes only add or
//                                               remove size-1 axes (the torch.export form of a
//                                               batched K^T: squeeze, transpose, unsqueeze)
#include "compiler/ops/transpose.h"
#include "compiler/ops/shape_util.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace mono {
namespace {

std::vector<int64_t> perm_of(const Node& t) { return transpose_perm(t); }

std::vector<int64_t> non_unit_axes(const Shape& s) {
  std::vector<int64_t> axes;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] != 1) axes.push_back(static_cast<int64_t>(i));
  return axes;
}

Node* add_transpose(Graph& g, Node* before, Value* x, std::vector<int64_t> perm, const TensorType& type) {
  Node* t = g.insert_node_before(before, OpKind::kTranspose, before->name + ".transpose", {x},
                                 {before->outputs[0]->name + ".t"}, before->opset);
  t->attrs["perm"] = std::move(perm);
  t->outputs[0]->type = type;
  return t;
}

// Reshape(Transpose(Reshape(x))) with unit reshapes -> Transpose(x), if x and the result have
// the same rank and the same positions of size-1 axes... in general: the result's non-unit
// axes must be x's non-unit axes permuted, and its unit axes filled with x's unit axes.
bool fold_sandwich(Graph& g, Node* r2) {
  Node* t = produced_by(r2->inputs[0], OpKind::kTranspose);
  if (!t) return false;
  Node* r1 = produced_by(t->inputs[0], OpKind::kReshape);
  if (!r1) return false;
  Value* x = r1->inputs[0];
  const Shape& xs = x->type.shape;
  const Shape& ys = r1->outputs[0]->type.shape;
  const Shape& zs = t->outputs[0]->type.shape;
  const Shape& ws = r2->outputs[0]->type.shape;
  if (!unit_reshape(xs, ys) || !unit_reshape(zs, ws) || xs.size() != ws.size()) return false;
  // Where each non-unit axis of y comes from in x (they keep their order through a unit reshape).
  std::vector<int64_t> x_nu = non_unit_axes(xs), y_nu = non_unit_axes(ys);
  std::vector<int64_t> y_to_x(ys.size(), -1);
  for (size_t k = 0; k < y_nu.size(); ++k) y_to_x[y_nu[k]] = x_nu[k];
  // Non-unit axes of z in order, as x axes.
  std::vector<int64_t> order;
  for (int64_t src : perm_of(*t))
    if (ys[src] != 1) order.push_back(y_to_x[src]);
  std::vector<int64_t> x_unit;
  for (size_t i = 0; i < xs.size(); ++i)
    if (xs[i] == 1) x_unit.push_back(static_cast<int64_t>(i));
  std::vector<int64_t> perm;
  size_t next_nu = 0, next_unit = 0;
  for (int64_t d : ws) {
    if (d != 1) perm.push_back(order[next_nu++]);
    else if (next_unit < x_unit.size()) perm.push_back(x_unit[next_unit++]);
    else return false;
  }
  Node* nt = add_transpose(g, r2, x, perm, r2->outputs[0]->type);
  g.replace_all_uses(r2->outputs[0], nt->outputs[0]);
  return true;
}

bool fold_transposes(Graph& g, Node* t2) {
  Node* t1 = produced_by(t2->inputs[0], OpKind::kTranspose);
  if (!t1) return false;
  std::vector<int64_t> p = perm_of(*t1), q = perm_of(*t2), r(q.size());
  for (size_t i = 0; i < q.size(); ++i) r[i] = p[q[i]];
  Node* nt = add_transpose(g, t2, t1->inputs[0], r, t2->outputs[0]->type);
  g.replace_all_uses(t2->outputs[0], nt->outputs[0]);
  return true;
}

bool fold_reshapes(Graph& g, Node* r2) {
  Node* r1 = produced_by(r2->inputs[0], OpKind::kReshape);
  if (!r1) return false;
  // The second reshape's shape is static; reading r1's input directly gives the same result.
  const Shape& out = r2->outputs[0]->type.shape;
  Value* shape = g.add_constant(r2->name + ".shape", Tensor::from_ints({static_cast<int64_t>(out.size())}, out));
  r2->inputs = {r1->inputs[0], shape};
  r2->attrs.erase("allowzero");
  return true;
}

}  // namespace

bool fold_reshape_transpose(Graph& g) {
  bool changed = false;
  std::vector<Node*> nodes;
  for (const auto& n : g.nodes()) nodes.push_back(n.get());
  for (Node* n : nodes) {
    if (!n->outputs[0]) continue;
    if (n->op == OpKind::kReshape) changed |= fold_sandwich(g, n) || fold_reshapes(g, n);
    else if (n->op == OpKind::kTranspose) changed |= fold_transposes(g, n);
  }
  if (changed) g.remove_dead_code();
  return changed;
}

}  // namespace mono
