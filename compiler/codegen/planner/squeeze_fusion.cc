// Squeeze-and-excitation's two GEMVs in one stage (plan.h Group::squeeze): the squeeze (C -> C/r
// channels, a GEMV of the pooled vector) becomes a prologue of the excite GEMV that reads it,
// each excite item computing it again into shared memory. Its stage, barrier and arena round
// trip go; the price is the squeeze's weights read once per excite item.
#include <algorithm>

#include "compiler/codegen/planner/steps.h"
#include "compiler/codegen/support.h"

namespace mono::planner {

void fuse_squeezes(const Uses& uses, KernelPlan* plan) {
  for (Group& e : plan->groups) {
    GemvForm fe, fs;
    if (e.kind != GroupKind::kPointwise || e.runs_fused() || !gemv_form(*e.anchor, &fe)) continue;
    auto it = uses.producer.find(plan->root(fe.x));
    if (it == uses.producer.end() || it->second == e.id) continue;
    Group& s = plan->groups[it->second];
    if (s.kind != GroupKind::kPointwise || s.runs_fused() || s.squeeze >= 0 || s.gate || !gemv_form(*s.anchor, &fs)) continue;
    const Value* r = plan->root(s.output);
    if (r != plan->root(fe.x) || !uses.is_private(r) || uses.extra_outputs.count(r) || s.anchor->outputs.size() != 1) continue;
    if (!squeeze_fits_inside(fs) || squeeze_smem_bytes(fs.n) > plan->ctx.smem_limit) continue;
    // A Transpose step moves where an output lands; shared memory holds x in the squeeze's own
    // order (found in review: the emitter stored it there unpermuted).
    if (std::any_of(s.epilogue.begin(), s.epilogue.end(), [](const Node* n) { return n->op == OpKind::kTranspose; }))
      continue;
    e.squeeze = s.id;
    s.fused_into = e.id;
  }
}

}  // namespace mono::planner
