// `mono-compile --emit plan`: the plan as text (context, groups by stage, schedules and the
// cost model's estimates). Golden tests (tests/golden/plan/) compare it.
#include <algorithm>
#include <ostream>
#include <string>

#include "compiler/codegen/cost_model.h"
#include "compiler/codegen/plan.h"
#include "compiler/codegen/support.h"
#include "compiler/support/error.h"

namespace mono {
namespace {

// "f16[1,16,64] in the arena at 4096", "... output 0": what a group writes and where.
std::string written(const KernelPlan& plan, const Value* v) {
  const Value* r = plan.root(v);
  std::string shape;
  for (size_t d = 0; d < r->type.shape.size(); ++d) shape += str_cat(d ? "," : "", r->type.shape[d]);
  std::string s = str_cat(dtype_name(plan.dtype_of(r)), "[", shape, "]");
  auto it = plan.placement.find(r);
  if (it != plan.placement.end()) {
    if (it->second.space == Placement::kArena) s += str_cat(" in the arena at ", it->second.offset);
    if (it->second.space == Placement::kOutput) s += str_cat(" = output ", it->second.index);
  }
  if (plan.swapped_last2.count(r)) s += ", stored with its last two axes swapped";
  return s;
}

}  // namespace

void print_plan(std::ostream& os, const Graph& graph, const KernelPlan& plan) {
  const KernelContext& c = plan.ctx;
  os << "kernel plan for " << graph.name << " (" << (plan.settings.precision == Precision::kF16 ? "fp16" : "fp32") << ", sm_"
     << c.sm_arch << ")\n";
  os << "context: " << c.threads << " threads/block, " << c.blocks_per_sm << " block/SM x " << c.sms << " SMs = grid "
     << c.grid() << ", dynamic shared memory " << c.smem_bytes << " B (budget " << c.smem_limit << " B), register cap "
     << c.register_cap() << "\n";
  int tuned = 0, rejected = 0;
  for (const Group& g : plan.groups) tuned += g.tuned, rejected += !g.override_rejected.empty();
  os << "schedules: " << tuned << " tuned, " << plan.groups.size() - tuned << " default (untuned)";
  if (rejected) os << ", " << rejected << " tuned schedules rejected";
  os << "\n";
  if (plan.settings.precision == Precision::kF16)
    os << "precision: fp16 storage, fp32 accumulation; " << plan.fp32_fallbacks
       << " float tensors kept in fp32 (calibrated range outside fp16)\n";
  os << "memory: weights " << plan.weights_bytes << " B (" << plan.constants.size() << " packed constants), arena "
     << plan.arena_bytes << " B, sync " << plan.sync_words << " words\n";
  const int calls = plan.kernel_calls;
  os << "code: group functions " << (plan.inline_groups ? "inlined" : "out of line") << ", " << calls
     << (calls == 1 ? " call" : " calls") << " in the kernel's text (a layer loop's stages counted once)\n";
  double total = 0;
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    os << "stage " << s << ":\n";
    for (int gid : plan.stages[s].groups) {
      const Group& g = plan.groups[gid];
      if (g.fused_into >= 0) continue;  // printed with its head
      if (!g.fused.empty()) {
        const Group& sm = plan.groups[g.fused[0]];
        const Group& pv = plan.groups[g.fused[1]];
        os << "  group " << g.id << " [attention] " << g.nodes() << " + " << sm.nodes() << " + " << pv.nodes() << "\n";
        os << "    -> " << written(plan, pv.output) << ", " << g.items << " work items (batch x " << g.gemm.bm
           << " query rows), S = QK: " << g.gemm.str() << ", O = PV: " << pv.gemm.str() << (g.f16 ? ", fp16 mma" : ", fp32 ffma")
           << (g.flash_chunk ? ", flash, keys streamed " + std::to_string(g.flash_chunk) + " at a time"
               : g.flash     ? ", flash"
                             : "")
           << ", est " << format_us(g.est_us) << ", fixed tiles\n";
        continue;
      }
      os << "  group " << g.id << " [" << group_kind_name(g.kind) << "] " << g.nodes() << "\n";
      if (g.squeeze >= 0)
        os << "    x computed by every item: group " << g.squeeze << " " << plan.groups[g.squeeze].nodes() << "\n";
      for (int id : at_read_groups(plan, g))
        os << "    computed where read: group " << id << " " << plan.groups[id].nodes() << "\n";
      os << "    -> " << written(plan, g.output) << ", " << g.items << " work items";
      if (g.kind == GroupKind::kGemm || g.kind == GroupKind::kConvGemm)
        os << ", " << g.gemm.str() << (g.gemm.wgmma ? "" : g.f16 ? ", fp16 mma" : ", fp32 ffma");
      if (const int kg = wgmma_k_groups(g.gemm, plan.ctx); kg > 1) os << " in " << kg << " k groups";
      if (auto t = plan.weight_tiles.find(g.anchor); t != plan.weight_tiles.end())
        os << ", weights packed in " << t->second.tile_rows << "x" << t->second.tile_k << " tiles";
      if (g.kind == GroupKind::kPointwise) os << ", ilp " << g.pointwise.ilp;
      if (g.pointwise.strip) os << ", strip " << g.pointwise.strip;
      if (g.pointwise.warps) os << ", warps " << g.pointwise.warps << " an output";
      os << ", est " << format_us(g.est_us) << ", " << (g.tuned ? "tuned" : "default (untuned)") << "\n";
      if (!g.override_rejected.empty()) os << "    tuned schedule rejected: " << g.override_rejected << "\n";
    }
    double stage_us = 0;
    for (int gid : plan.stages[s].groups) stage_us = std::max(stage_us, plan.groups[gid].est_us);
    total += stage_us;
    if (s + 1 < plan.stages.size()) {
      os << "  -- grid barrier --\n";
      total += kBarrierUs;
    }
  }
  os << "total: " << plan.groups.size() << " groups in " << plan.stages.size() << " stages, "
     << (plan.stages.empty() ? 0 : plan.stages.size() - 1) << " barriers; estimated " << format_us(total)
     << " (cost model, not a measurement)\n";
}

}  // namespace mono
