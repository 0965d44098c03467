// GEMM cores: which fp16 GEMM tiles run on wgmma (GemmWg, gemm_wg.cuh) instead of mma.sync
// (GemmF16). wgmma reads both operands from shared memory in the 128-byte swizzled layout, so
// a group qualifies only where the emitter reads A through a tensor map (TensorK: one fp16
// [M][K] activation in the arena) and B is a constant weight packed tile by tile (tile_weights
// then packs it swizzled), with tiles of 64-row warpgroups. Every default schedule that
// qualifies runs on wgmma: on the H100, in one call (bench/RESULTS.md, run46), bert-base
// 648.7 -> 635.1 us, gpt2 659.1 -> 640.0, vit-base 921.4 -> 900.6, resnet50 916.1 -> 913.7.
// Tuned schedules say themselves (GemmSchedule::wgmma).
#include <algorithm>

#include "compiler/codegen/cost_model.h"
#include "compiler/codegen/planner/steps.h"
#include "compiler/codegen/support.h"
#include "compiler/ops/op.h"

namespace mono {

bool a_through_tensor_map(const KernelPlan& plan, const Group& grp, const std::set<const Value*>* graph_outputs) {
  const Node& n = *grp.anchor;
  if (!grp.f16 || (n.op != OpKind::kMatMul && n.op != OpKind::kGemm)) return false;
  const Value* a = n.inputs[0];
  const Shape& as = a->type.shape;
  if (as.size() < 2 || (n.op == OpKind::kGemm && node_attrs(n).attr_int("transA"))) return false;
  const int64_t M = as[as.size() - 2], K = as.back();
  const Shape& ys = n.outputs[0]->type.shape;
  if (shape_numel(ys) != M * ys.back()) return false;  // one matrix, no batch
  const Value* ra = plan.root(a);
  bool arena;
  if (graph_outputs) {
    arena = !ra->is_constant() && (ra->producer != nullptr || plan.arena_inputs.count(ra)) && !graph_outputs->count(ra);
  } else {
    auto it = plan.placement.find(ra);
    arena = it != plan.placement.end() && it->second.space == Placement::kArena;
  }
  return arena && plan.dtype_of(a) == DType::kF16 && K % 8 == 0;
}

bool wgmma_operands(const KernelPlan& plan, const Group& grp, const std::set<const Value*>* graph_outputs) {
  if (grp.kind != GroupKind::kGemm || grp.runs_fused()) return false;
  const Node& n = *grp.anchor;
  const Value* w = n.input(1) ? plan.root(n.inputs[1]) : nullptr;
  if (!w || !w->is_constant() || (n.op == OpKind::kMatMul && n.inputs[1]->type.rank() != 2)) return false;
  return a_through_tensor_map(plan, grp, graph_outputs);
}

GemmSchedule wgmma_schedule(const GemmSchedule& s, const KernelContext& ctx) {
  GemmSchedule c = s;
  c.wgmma = true;
  c.bm = std::max(64, c.bm);
  c.warps_m = c.bm / 16;
  c.warps_n = std::max(1, ctx.threads / 32 / c.warps_m);  // warpgroups side by side along n
  return c;
}

std::optional<GemmSchedule> moved_to_wgmma(const GemmSchedule& s, int64_t m, const KernelContext& ctx) {
  // A warpgroup computes 64 rows (the tensor map zero-fills past M): a 32-row tile grows to
  // 64 only where that leaves the item count alone (M <= 32). With fewer items bert-base's
  // out-projection (32x64, split-K 2) went 6.7 -> 8.2 us a layer (H100, run45).
  if (s.bm % 64 != 0 && ceil_div(m, s.bm) != ceil_div(m, 64)) return std::nullopt;
  const GemmSchedule c = wgmma_schedule(s, ctx);
  if (!gemm_schedule_problem(true, c, ctx, nullptr).empty()) return std::nullopt;
  return c;
}

GemmSchedule wgmma_k_grouped(const GemmSchedule& s, const KernelContext& ctx) {
  GemmSchedule k = s;
  k.warps_n = 1;
  return wgmma_k_groups(k, ctx) > 1 && gemm_schedule_problem(true, k, ctx, nullptr).empty() ? k : s;
}

}  // namespace mono

namespace mono::planner {

void choose_gemm_cores(const Uses& uses, KernelPlan* plan) {
  for (Group& grp : plan->groups) {
    if (grp.kind != GroupKind::kGemm) continue;
    GemmSchedule& gs = grp.gemm;
    const bool ok = wgmma_operands(*plan, grp, &uses.graph_outputs);
    if (grp.tuned) {
      // A tuned schedule on wgmma for a group whose operands here do not allow it (same
      // signature, but A is the model's input, say) runs the same tile on mma.sync.
      if (gs.wgmma && !ok) gs.wgmma = false;
      continue;
    }
    if (!ok) continue;
    if (const std::optional<GemmSchedule> c = moved_to_wgmma(gs, gemm_problem(grp).m, plan->ctx)) gs = *c;
  }
}

}  // namespace mono::planner
