// Schedules: every GEMM group's default tile and split-K factor from the cost model (chosen
// against the other groups of its stage, which share the grid), tuned schedules where the
// options carry a valid one for the group's signature, then each group's work items, estimate
// and shared memory.
#include <algorithm>
#include <vector>

#include "compiler/codegen/cost_model.h"
#include "compiler/codegen/planner/steps.h"
#include "compiler/codegen/support.h"
#include "compiler/support/error.h"

namespace mono::planner {
namespace {

bool gemm_like(const Group& g) { return g.kind == GroupKind::kGemm || g.kind == GroupKind::kConvGemm; }

// The default schedule of a GEMM group: the menu tile and split-K factor with the lowest
// estimate for its stage. Groups sharing a stage share the grid: their items go round-robin
// over the blocks, so the stage takes about ceil(all items / grid) times its slowest item.
// `others_items` / `others_item_us` describe the stage's other groups (0 when alone).
// `copies`: the stage runs that many groups of this problem with the same schedule (their
// items all count). `alone`: every other group of its stage runs fused. `wgmma`: the group's operands allow wgmma (gemm_cores.cc wgmma_operands).
void choose_gemm(const KernelContext& ctx, Group& grp, bool wgmma, int64_t others_items = 0, double others_item_us = 0,
                 int copies = 1, bool incumbent = false, bool alone = false) {
  const GemmProblem s = gemm_problem(grp);
  // The menu, and tiles fitted to output channels that the menu's widths do not divide.
  std::vector<GemmSchedule> tiles = default_gemm_tiles(grp.f16, ctx, s.conv);
  append_new_tiles(&tiles, fitted_gemm_tiles(s, grp.f16, ctx));
  // And where the group runs on wgmma, the 96-wide tile between the menu's 64 and 128 (and,
  // `alone` in its stage with a long K, the 128x128 tile: cost_model.h wide_wgmma_tiles).
  // Measured on the H100 (bench/RESULTS.md session 23, run203, same call, against the menu alone):
  // vit-base 564.9 -> 523.8 us (FFN1 stage 9.56 -> 7.98, FFN2 9.53 -> 8.82, Q/K/V 7.76 -> 6.78),
  // vit-b-16 618.9 -> 566.5, whisper-encoder 496.0 -> 482.7, swin-t 710.0 -> 704.0; bert-base,
  // gpt2 and resnet50 keep their tiles. Of the 16 zoo models only albert, swin-t, vit-b-16 and
  // whisper-encoder change tiles (run207, bench/zoo_plan_ab.sh): albert 2928.5 -> 2799.6 us.
  if (wgmma) append_new_tiles(&tiles, wide_wgmma_tiles(s, grp.f16, alone, ctx));
  if (tiles.empty())
    user_error(grp.anchor->describe(), ": no GEMM tile of the menu fits the context (", ctx.threads, " threads, ",
               ctx.smem_limit, " B shared memory)");
  // A k tile of 128 for the one-matrix fp16 GEMMs whose A the emitter reads through a tensor
  // map (batched ones, attention's, are not), where K >= 128: with A through tensor maps it
  // measured faster on all four full models (H100, bench/RESULTS.md session 10: bert-base
  // 659.1 -> 643.3 us, gpt2 677.0 -> 663.0, vit-base 1038.7 -> 919.0). Elsewhere the menu's.
  // Channels-last convolutions (conv-gemm groups whose A is gathered, not a tensor map) take
  // it too: the menu's k tiles for them measured mixed in one call (H100, bench/runs/run155:
  // resnet50 336.5 -> 335.2 us, its stem 13.6 -> 12.3; resnet18 145.9 -> 139.3; densenet121,
  // whose 3x3 convolutions have K = 1152, 732.2 -> 747.3), so the rule stays as it is.
  const int bk = grp.f16 && !s.conv && s.batch == 1 && s.k >= 128 ? 128 : 0;
  auto us_of = [&](const GemmSchedule& c) {
    return s.conv || (others_items == 0 && copies == 1)
               ? estimate_gemm_us(s, grp.f16, c, ctx)
               : round_robin_us(copies * gemm_items(s, c) + others_items,
                                std::max(gemm_item_us(s, grp.f16, c, ctx), others_item_us), ctx);
  };
  // With `incumbent`, the group's current schedule stays unless another is clearly (3 %) better.
  double best = incumbent ? us_of(grp.gemm) : 1e30;
  auto choose = [&](int k_tile) {
    for (GemmSchedule t : tiles) {
      if (k_tile > 0 && grp.f16 && !s.conv) t.bk = k_tile;
      if (k_tile > 0 && !gemm_schedule_problem(grp.f16, t, ctx, nullptr).empty()) continue;
      for (int splits : split_k_factors(s.k, t.bk)) {
        GemmSchedule c = t;
        c.splits = splits;
        const double us = us_of(c);
        if (us < best * 0.97) {
          best = us;
          grp.gemm = c;
        }
      }
    }
  };
  choose(bk);
  if (best == 1e30 && bk > 0) choose(0);  // BK 128 fits no tile of this context: the menu's
  // The tall row tiles (96 and 128 rows, M >= 1024: cost_model.h tall_gemm_tiles) for a GEMM
  // alone in its stage, where the menu's choice would not run on wgmma and the group is not a
  // 1-D convolution. Measured on the H200 (bench/RESULTS.md session 31, run248, same call,
  // against the menu alone): resnet50 320.8 -> 315.6 us (its stem and three 56x56 1x1
  // convolutions: one round of the grid), resnet18 131.5 -> 128.9; the other CNNs and
  // transformers of the zoo within noise. Offered to every GEMM alone in its stage (run247),
  // swin-t's two MLP GEMMs left wgmma 64x96 (+0.8 %) and whisper-encoder's 1-D convolution
  // stems took them (+1.2 %); offered beside other GEMMs too (run246), densenet121 727.7 -> 745.5.
  if (alone && best < 1e30) {
    const bool menu_on_wgmma = wgmma && moved_to_wgmma(grp.gemm, s.m, ctx).has_value();
    // A 1-D convolution runs as a 2-D one over a height of 1 (whisper's stems: [1, 1, 3000, 80]).
    const std::vector<int64_t>& in_shape = grp.anchor->inputs[0]->type.shape;
    const bool conv_1d = grp.kind == GroupKind::kConvGemm && in_shape.size() == 4 && (in_shape[1] == 1 || in_shape[2] == 1);
    if (!menu_on_wgmma && !conv_1d) {
      tiles = tall_gemm_tiles(s, grp.f16, ctx);
      choose(bk);
    }
  }
  MONO_CHECK(best < 1e30, grp.anchor->describe(), ": no tile of a non-empty menu was chosen");
}

// Re-chooses the default schedules of GEMM groups that share a stage with other GEMM groups,
// each against the others' current choice (two rounds settle the BERT-style Q/K/V stages).
// Channels-last convolutions do not take part: with them (a shortcut convolution beside a
// block's first one) it measured neutral (H100, run122, same call: resnet18 154.8 against 158.3
// us alone, resnet50 350.3 against 347.5), and a convolution's default would then differ from
// its tuning fragment's, where it is alone.
void choose_shared_stage_gemms(const Uses& uses, KernelPlan* plan) {
  for (const Stage& st : plan->stages) {
    std::vector<int> gemms;
    for (int gid : st.groups) {  // dense GEMMs only (see estimate_gemm_us)
      const Group& g = plan->groups[gid];
      if (g.kind == GroupKind::kGemm && !g.runs_fused()) gemms.push_back(gid);
    }
    if (gemms.size() < 2) continue;
    // GEMMs of one problem (BERT's Q, K, V) start from the best common schedule. Chosen
    // alone, each took split-K 3; against each other's 72 items no single one could get the
    // stage back into one round of the grid (3 x 72 items on 132 blocks), although 3 x 24
    // unsplit items fit. The rounds keep it unless another schedule is 3 % better against the
    // others: re-chosen from scratch, near-ties split vit-base's Q/K/V into two 64x128 split-K 2
    // parts and one 64x96 (its stage 7.17 us against 6.78 common; H100, run203, one call;
    // whisper-encoder 490.6 -> 482.7 us, swin-t 706.5 -> 704.0, vit-b-16 555.9 -> 566.5).
    const GemmProblem p0 = gemm_problem(plan->groups[gemms[0]]);
    bool same = true;
    for (int gid : gemms) {
      const GemmProblem p = gemm_problem(plan->groups[gid]);
      same = same && p.m == p0.m && p.n == p0.n && p.k == p0.k && p.batch == p0.batch && !p.conv &&
             plan->groups[gid].f16 == plan->groups[gemms[0]].f16;
    }
    if (same) {
      // The common schedule takes the wgmma-only tile only if every copy can run on wgmma.
      bool all_wgmma = true;
      for (int gid : gemms) all_wgmma = all_wgmma && wgmma_operands(*plan, plan->groups[gid], &uses.graph_outputs);
      Group& g0 = plan->groups[gemms[0]];
      choose_gemm(plan->ctx, g0, all_wgmma, 0, 0, static_cast<int>(gemms.size()));
      for (int gid : gemms) plan->groups[gid].gemm = g0.gemm;
    }
    for (int round = 0; round < 2; ++round) {
      for (int gid : gemms) {
        int64_t items = 0;
        double item_us = 0;
        for (int other : gemms) {
          if (other == gid) continue;
          const Group& o = plan->groups[other];
          const GemmProblem op = gemm_problem(o);
          items += gemm_items(op, o.gemm);
          item_us = std::max(item_us, gemm_item_us(op, o.f16, o.gemm, plan->ctx));
        }
        Group& g = plan->groups[gid];
        choose_gemm(plan->ctx, g, wgmma_operands(*plan, g, &uses.graph_outputs), items, item_us, 1, /*incumbent=*/same);
      }
    }
  }
}

// A tuned schedule for the group, if the options have a valid one for its signature.
bool apply_override(const PlanOptions& options, const KernelPlan& plan, Group& grp) {
  if (!options.signature) return false;
  grp.signature = options.signature(plan, grp);
  auto it = options.schedules.find(grp.signature);
  if (it == options.schedules.end()) return false;
  if (grp.runs_fused()) {
    grp.override_rejected = "the group runs fused (attention's fixed tiles, or a squeeze inside its consumer)";
    return false;
  }
  const Schedule& o = it->second;
  std::string why;
  if (o.kind != grp.kind) {
    why = str_cat("the schedule is for a ", group_kind_name(o.kind), " group, this is a ", group_kind_name(grp.kind), " group");
  } else if (gemm_like(grp)) {
    const GemmProblem p = gemm_problem(grp);
    why = gemm_schedule_problem(grp.f16, o.gemm, plan.ctx, &p);
  } else if (grp.kind == GroupKind::kPointwise) {
    why = ilp_problem(o.pointwise.ilp);
    if (why.empty()) why = strip_problem(*grp.anchor, o.pointwise.strip);
    if (why.empty()) why = pool_warps_problem(*grp.anchor, o.pointwise.warps, plan.ctx);
  }
  if (!why.empty()) {
    grp.override_rejected = why;
    return false;
  }
  if (gemm_like(grp)) grp.gemm = o.gemm;
  if (grp.kind == GroupKind::kPointwise) grp.pointwise = o.pointwise;
  grp.tuned = true;
  return true;
}

}  // namespace

void choose_schedules(const Uses& uses, const PlanOptions& options, KernelPlan* plan) {
  KernelContext& ctx = plan->ctx;
  // Whether a group has its stage's grid to itself (the other groups there run fused).
  auto alone = [&](const Group& grp) {
    for (int gid : plan->stages[grp.stage].groups)
      if (&plan->groups[gid] != &grp && !plan->groups[gid].runs_fused()) return false;
    return true;
  };
  // Defaults first, all of them (so that a default never depends on another group's tuned
  // schedule), then the tuned schedules replace theirs.
  for (Group& grp : plan->groups)
    if (gemm_like(grp) && !grp.runs_fused())
      choose_gemm(ctx, grp, wgmma_operands(*plan, grp, &uses.graph_outputs), 0, 0, 1, false, alone(grp));
  choose_shared_stage_gemms(uses, plan);
  for (Group& grp : plan->groups) apply_override(options, *plan, grp);
  choose_gemm_cores(uses, plan);
  for (Group& grp : plan->groups) {
    switch (grp.kind) {
      case GroupKind::kGemm:
      case GroupKind::kConvGemm: {
        const GemmProblem p = gemm_problem(grp);
        grp.items = gemm_items(p, grp.gemm);
        grp.est_us = estimate_gemm_us(p, grp.f16, grp.gemm, ctx);
        grp.smem_bytes = gemm_smem_bytes(grp.f16, grp.gemm.bm, grp.gemm.bn, grp.gemm.bk, grp.gemm.stages);
        break;
      }
      case GroupKind::kRows: {
        const int64_t rows = grp.anchor->inputs[0]->type.numel() / row_length(*grp.anchor);
        const bool block = block_per_row(*grp.anchor);
        grp.items = block ? rows : ceil_div(rows, ctx.threads / 32);
        grp.smem_bytes = block ? kBlockRowScratchBytes : 0;
        grp.est_us = estimate_rows_us(static_cast<double>(grp.output->type.numel()) * dtype_size(plan->dtype_of(grp.output)));
        break;
      }
      case GroupKind::kPointwise: {
        if (!grp.tuned) grp.pointwise.strip = default_strip_height(*grp.anchor, ctx);
        if (!grp.tuned) grp.pointwise.warps = default_pool_warps(*grp.anchor, ctx);
        const PointwiseProblem p = pointwise_problem(*plan, grp);
        if (!grp.tuned) grp.pointwise.ilp = default_ilp(p, ctx);
        grp.items = pointwise_items(p, grp.pointwise.ilp, ctx);
        grp.est_us = estimate_pointwise_us(p, grp.pointwise.ilp, ctx);
        grp.smem_bytes = pointwise_smem_bytes(*plan, grp, grp.pointwise.warps);
        if (grp.fused_into >= 0 || grp.at_read) {  // a squeeze or a movement: its readers' items compute it
          grp.items = 0;
          grp.est_us = 0;
        }
        break;
      }
    }
    ctx.smem_bytes = std::max(ctx.smem_bytes, grp.smem_bytes);
  }
  // Flash heads first: a streamed one may take wider row tiles (attention_fusion.cc), which
  // its items and estimate below count.
  choose_flash(uses, plan);
  // An attention group's items and estimate cover its three parts.
  for (Group& grp : plan->groups) {
    if (grp.fused.empty()) continue;
    Group& pv = plan->groups[grp.fused[1]];
    const GemmProblem a = gemm_problem(grp), b = gemm_problem(pv);
    grp.items = a.batch * ceil_div(a.m, grp.gemm.bm);
    const double item_us = ceil_div(a.n, grp.gemm.bn) * gemm_item_us(a, grp.f16, grp.gemm, ctx) + kAttentionRowsUs +
                           ceil_div(b.n, pv.gemm.bn) * gemm_item_us(b, pv.f16, pv.gemm, ctx);
    grp.est_us = round_robin_us(grp.items, item_us, ctx);
    for (int id : grp.fused) {
      plan->groups[id].items = 0;
      plan->groups[id].est_us = 0;
    }
  }
}

}  // namespace mono::planner
