// Small queries shared by the passes.
#pragma once

#include <cmath>

#include "compiler/ir/graph.h"

namespace mono {

// The node producing `v` if it is of kind `op`, else null.
inline Node* produced_by(const Value* v, OpKind op) {
  return v && v->producer && v->producer->op == op ? v->producer : nullptr;
}

// True if `v` is a constant whose elements all equal `x` within `tol` (relative).
inline bool is_constant_near(const Value* v, double x, double tol = 1e-6) {
  if (!v || !v->is_constant() || v->constant->numel() == 0) return false;
  for (int64_t i = 0; i < v->constant->numel(); ++i) {
    double e = v->constant->as_double(i);
    if (!(std::fabs(e - x) <= tol * std::max(1.0, std::fabs(x)))) return false;
  }
  return true;
}

// Number of node input slots reading `v`, plus one if it is a graph output.
inline int use_count(const Graph& g, const Value* v) {
  int n = g.is_graph_output(v) ? 1 : 0;
  for (const auto& node : g.nodes())
    for (const Value* in : node->inputs) n += in == v;
  return n;
}

// A constant holding shape `s` (a Reshape's target), named BASE.shape.
inline Value* shape_constant(Graph& g, const std::string& base, const Shape& s) {
  return g.add_constant(base + ".shape", Tensor::from_ints({static_cast<int64_t>(s.size())}, s));
}

// Inserts before `at` the node `name` = Reshape(v, SHAPE_BASE.shape) and returns its output,
// named `out`, of v's dtype and shape `s`.
inline Value* insert_reshape(Graph& g, Node* at, const std::string& name, Value* v, const Shape& s,
                             const std::string& shape_base, const std::string& out) {
  Node* r = g.insert_node_before(at, OpKind::kReshape, name, {v, shape_constant(g, shape_base, s)}, {out}, at->opset);
  r->outputs[0]->type = TensorType{v->type.dtype, s};
  return r->outputs[0];
}

// Replaces every use of node `n`'s output `i` with `v`; the node is left dead.
inline void forward_output(Graph& g, Node* n, int i, Value* v) { g.replace_all_uses(n->outputs[i], v); }

// The nodes of op `op`, in graph order (a copy: passes insert nodes while they walk it).
inline std::vector<Node*> nodes_of(const Graph& g, OpKind op) {
  std::vector<Node*> out;
  for (const auto& n : g.nodes())
    if (n->op == op) out.push_back(n.get());
  return out;
}

// A recognised pattern ending at `at` (one output y) becomes op(x), inserted before it, named
// after y, of y's type; y's readers read it instead. Returns the new node (for its attributes).
inline Node* replace_with_unary(Graph& g, Node* at, OpKind op, const std::string& suffix, Value* x) {
  Value* y = at->outputs[0];
  Node* n = g.insert_node_before(at, op, y->name + suffix, {x}, {y->name + suffix}, at->opset);
  n->outputs[0]->type = y->type;
  g.replace_all_uses(y, n->outputs[0]);
  return n;
}

}  // namespace mono
