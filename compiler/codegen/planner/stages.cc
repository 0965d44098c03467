// Stages: a group runs in the stage after the latest stage that writes what it reads (grid
// barriers separate stages); independent groups share a stage and its grid. An attention
// group's parts run with their head.
//
// Groups are listed by their anchors' graph order, which need not be an order of their
// dependencies: an epilogue step may read a value that a later-listed group writes (Div(a, b)
// fused into a's group, b computed by a group whose anchor comes after a's). So a group's
// stage is the longest dependency path to it, found depth first over what it reads.
#include <algorithm>
#include <cstdlib>
#include <functional>

#include "compiler/codegen/cost_model.h"
#include "compiler/codegen/support.h"

#include "compiler/codegen/planner/steps.h"
#include "compiler/support/error.h"

namespace mono::planner {

void assign_stages(const Uses& uses, KernelPlan* plan) {
  // The head of each group (itself, or the attention group it is fused into) and the members
  // of each head.
  std::vector<std::vector<int>> members(plan->groups.size());
  auto head_of = [&](int id) { return plan->groups[id].fused_into >= 0 ? plan->groups[id].fused_into : id; };
  for (const Group& grp : plan->groups) members[head_of(grp.id)].push_back(grp.id);
  enum { kNew, kVisiting, kDone };
  std::vector<int> state(plan->groups.size(), kNew);
  std::function<int(int)> stage_of = [&](int head) -> int {
    if (state[head] == kDone) return plan->groups[head].stage;
    MONO_CHECK(state[head] != kVisiting, "the groups' dependencies form a cycle through group ", head);
    state[head] = kVisiting;
    int stage = 0;
    auto visit = [&](const Node* n) {
      for (const Value* in : n->inputs) {
        if (!in) continue;
        auto it = uses.producer.find(plan->root(in));
        if (it == uses.producer.end() || head_of(it->second) == head) continue;
        stage = std::max(stage, stage_of(head_of(it->second)) + 1);
      }
    };
    for (int id : members[head]) {
      visit(plan->groups[id].anchor);
      for (const Node* e : plan->groups[id].epilogue) visit(e);
    }
    for (int id : members[head]) plan->groups[id].stage = stage;
    state[head] = kDone;
    return stage;
  };
  int max_stage = -1;
  for (const Group& grp : plan->groups)
    if (grp.fused_into < 0) max_stage = std::max(max_stage, stage_of(grp.id));
  // The invariant the kernel's correctness rests on: what a group reads is written in an
  // earlier stage (a grid barrier apart) or by the group itself.
  for (const Group& grp : plan->groups) {
    std::vector<const Node*> nodes = {grp.anchor};
    nodes.insert(nodes.end(), grp.epilogue.begin(), grp.epilogue.end());
    for (const Node* n : nodes)
      for (const Value* in : n->inputs) {
        if (!in) continue;
        auto it = uses.producer.find(plan->root(in));
        if (it == uses.producer.end() || head_of(it->second) == head_of(grp.id)) continue;
        MONO_CHECK(plan->groups[it->second].stage < grp.stage, "group ", grp.id, " (stage ", grp.stage, ") reads ",
                   in->name, ", written by group ", it->second, " in stage ", plan->groups[it->second].stage);
      }
  }
  plan->stages.assign(max_stage + 1, Stage{});
  for (const Group& grp : plan->groups) plan->stages[grp.stage].groups.push_back(grp.id);
}


// A LayerNorm stage after the GEMM that writes its rows costs a grid barrier and waits for the
// slowest tile of the whole stage. Where the LayerNorm is its stage's only group, reads the rows
// of one GEMM group's output [M][N] (N its row length, batch 1, an elementwise epilogue) written
// in the stage before, runs a warp a row, and both stages' items fit the grid at once (its items
// then take the blocks the GEMM leaves idle), the LayerNorm joins the GEMM's stage: each of its
// items waits for the GEMM tiles of its row tile (barrier.cuh rows_ready_wait), not for a grid
// barrier. Its items come after the GEMM's in the stage's walk, so no wait blocks a tile.
void overlap_layer_norms(const Uses& uses, KernelPlan* plan) {
  if (std::getenv("MONO_AB_NO_LN_OVERLAP")) return;  // TEMPORARY A/B switch
  auto stage_items = [&](int s) {
    int64_t items = 0;
    for (int id : plan->stages[s].groups)
      if (plan->groups[id].fused_into < 0) items += plan->groups[id].items;
    return items;
  };
  for (int s = 1; s < static_cast<int>(plan->stages.size()); ++s) {
    if (plan->stages[s].groups.size() != 1) continue;
    Group& ln = plan->groups[plan->stages[s].groups[0]];
    const Node& n = *ln.anchor;
    if (ln.kind != GroupKind::kRows || n.op != OpKind::kLayerNormalization || block_per_row(n) || ln.runs_fused())
      continue;
    if (n.outputs.size() > 1 && std::any_of(n.outputs.begin() + 1, n.outputs.end(), [](const Value* v) { return v; }))
      continue;  // Mean and InvStdDev outputs
    const auto prod = uses.producer.find(plan->root(n.inputs[0]));
    if (prod == uses.producer.end()) continue;
    Group& gemm = plan->groups[prod->second];
    if (gemm.stage != s - 1 || gemm.kind != GroupKind::kGemm || gemm.runs_fused() || gemm.gate || gemm.squeeze >= 0 ||
        !gemm.f16 || gemm.rows_counters >= 0 || plan->root(gemm.output) != plan->root(n.inputs[0]) ||
        plan->swapped_last2.count(plan->root(gemm.output)))
      continue;
    const GemmProblem gp = gemm_problem(gemm);
    const int64_t len = row_length(n), rows_per_item = plan->ctx.threads / 32;
    if (gp.conv || gp.batch != 1 || gp.n != len || gp.m * gp.n != n.inputs[0]->type.numel() ||
        gemm.gemm.bm % rows_per_item != 0)
      continue;
    if (!std::all_of(gemm.epilogue.begin(), gemm.epilogue.end(), [](const Node* e) { return is_epilogue_op(e->op); }))
      continue;
    if (stage_items(s - 1) + ln.items > plan->ctx.grid()) continue;
    ln.rows_from = gemm.id;
    gemm.rows_counters = 0;  // placed by place_tensors
    ln.stage = s - 1;
    plan->stages[s - 1].groups.push_back(ln.id);
    plan->stages.erase(plan->stages.begin() + s);
    for (Group& g : plan->groups)
      if (g.stage > s - 1 && g.id != ln.id) --g.stage;
    --s;
  }
}

}  // namespace mono::planner
