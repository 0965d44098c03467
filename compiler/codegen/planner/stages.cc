// Stages: a group runs in the stage after the latest stage that writes what it reads (grid
// barriers separate stages); independent groups share a stage and its grid. An attention
// group's parts run with their head.
//
// Groups are listed by their anchors' graph order, which need not be an order of their
// dependencies: an epilogue step may read a value that a later-listed group writes (Div(a, b)
// fused into a's group, b computed by a group whose anchor comes after a's). So a group's
// stage is the longest dependency path to it, found depth first over what it reads.
#include <algorithm>
#include <functional>

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

}  // namespace mono::planner
