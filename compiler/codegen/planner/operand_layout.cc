// Operand layouts chosen for their readers (plan.h KernelPlan::swapped_last2): a GEMM output
// that its epilogue transposes only so that GEMMs read it as a [K][N] B operand (attention's
// K^T) is stored with its last two axes swapped, so that its stores run along n and its
// readers load [N][K] rows.
#include "compiler/codegen/planner/steps.h"
#include "compiler/ops/shape_util.h"
#include "compiler/ops/transpose.h"

namespace mono::planner {
namespace {

// The group's epilogue transposes its result so that the output's last axis runs along the
// GEMM's m (stride N in the anchor's output): its stores are contiguous along m only.
bool stores_along_m(const Group& g) {
  Shape cur = g.anchor->outputs[0]->type.shape;
  if (cur.empty()) return false;
  const int64_t n = cur.back();
  std::vector<int64_t> stride;  // of each axis of `cur` in the anchor's output, once permuted
  for (const Node* e : g.epilogue) {
    if (e->op == OpKind::kTranspose) {
      const Shape& in = e->inputs[0]->type.shape;
      if (stride.empty()) {
        stride.assign(in.size(), 1);
        for (int64_t d = static_cast<int64_t>(in.size()) - 2; d >= 0; --d) stride[d] = stride[d + 1] * in[d + 1];
      } else if (in != cur) {
        return false;  // a view between transposes
      }
      std::vector<int64_t> next;
      for (int64_t p : transpose_perm(*e)) next.push_back(stride[p]);
      stride = next;
    } else if (!stride.empty() && e->outputs[0]->type.shape != cur && e->op != OpKind::kIsNaN) {
      // A view after a transpose: only one that adds or drops axes of size 1 keeps the strides
      // (torchvision's ViT transposes K to [heads][D][keys], then views it as [1][heads][D][keys]).
      const Shape& out = e->outputs[0]->type.shape;
      if (!unit_reshape(cur, out)) return false;
      stride = through_unit_reshape<int64_t>(cur, stride, out, 0);
    }
    if (e->op != OpKind::kIsNaN) cur = e->outputs[0]->type.shape;
  }
  return !stride.empty() && n > 1 && stride.back() == n;
}

}  // namespace

// A GEMM group's output (rank >= 2, not a graph output, written by nothing else, no views of
// it) whose every reader is a MatMul reading it as B.
void swap_b_operands(const Uses& uses, KernelPlan* plan) {
  for (const Group& g : plan->groups) {
    if (g.kind != GroupKind::kGemm || g.fused_into >= 0) continue;
    const Value* v = g.output;
    if (plan->root(v) != v || v->type.rank() < 2 || uses.graph_outputs.count(v) || uses.extra_outputs.count(v)) continue;
    bool viewed = false;
    for (const auto& a : plan->alias) viewed = viewed || a.second == v;
    if (viewed || !stores_along_m(g)) continue;
    int readers = 0;
    bool ok = true;
    for (const Group& r : plan->groups) {
      for (int i = 0; i < r.anchor->num_inputs(); ++i) {
        if (r.anchor->inputs[i] != v) continue;
        ++readers;
        ok = ok && i == 1 && r.kind == GroupKind::kGemm && r.anchor->op == OpKind::kMatMul && r.anchor->inputs[0] != v;
      }
      for (const Node* e : r.epilogue)
        for (const Value* in : e->inputs) ok = ok && in != v;
    }
    if (ok && readers > 0 && readers == uses.of(v)) plan->swapped_last2.insert(v);
  }
}

}  // namespace mono::planner
