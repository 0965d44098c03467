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

// Replaces every use of node `n`'s output `i` with `v`; the node is left dead.
inline void forward_output(Graph& g, Node* n, int i, Value* v) { g.replace_all_uses(n->outputs[i], v); }

}  // namespace mono
