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
#include <set>

#include "compiler/codegen/planner/steps.h"
#include "compiler/support/error.h"

namespace mono::planner {

namespace {

// Per group, the groups whose results it reads, through the movements it computes at read
// (Group::at_read): those have no stage, their inputs' producers count instead. Each group's
// set is made once (a roll's diamond of Slices is not walked once per path).
std::vector<std::set<int>> stored_producers(const Uses& uses, const KernelPlan& plan) {
  std::vector<std::set<int>> out(plan.groups.size());
  std::vector<char> done(plan.groups.size(), 0);
  std::function<const std::set<int>&(int)> of = [&](int id) -> const std::set<int>& {
    if (done[id]) return out[id];
    std::set<int> s;
    for (const Value* in : plan.groups[id].inputs()) {
      auto it = uses.producer.find(plan.root(in));
      if (it == uses.producer.end() || it->second == id) continue;
      if (!plan.groups[it->second].at_read) {
        s.insert(it->second);
      } else {
        const std::set<int>& inner = of(it->second);
        s.insert(inner.begin(), inner.end());
      }
    }
    out[id] = std::move(s);
    done[id] = 1;
    return out[id];
  };
  for (const Group& g : plan.groups) of(g.id);
  return out;
}

int head_of(const KernelPlan& plan, int id) { return plan.groups[id].fused_into >= 0 ? plan.groups[id].fused_into : id; }

// Each group's stage from the producers it waits for (stored_producers), at_read groups -1.
std::vector<int> number_stages(const KernelPlan& plan, const std::vector<std::set<int>>& producers) {
  // The members of each head (a group itself, or the attention group or squeeze consumer it is
  // fused into): they share its stage.
  std::vector<std::vector<int>> members(plan.groups.size());
  for (const Group& grp : plan.groups) members[head_of(plan, grp.id)].push_back(grp.id);
  enum { kNew, kVisiting, kDone };
  std::vector<int> state(plan.groups.size(), kNew), stages(plan.groups.size(), -1);
  std::function<int(int)> stage_of = [&](int head) -> int {
    if (state[head] == kDone) return stages[head];
    MONO_CHECK(state[head] != kVisiting, "the groups' dependencies form a cycle through group ", head);
    state[head] = kVisiting;
    int stage = 0;
    for (int id : members[head])
      for (int p : producers[id])
        if (head_of(plan, p) != head) stage = std::max(stage, stage_of(head_of(plan, p)) + 1);
    for (int id : members[head]) stages[id] = stage;
    state[head] = kDone;
    return stage;
  };
  for (const Group& grp : plan.groups)
    if (grp.fused_into < 0 && !grp.at_read) stage_of(grp.id);
  for (const Group& grp : plan.groups)
    if (grp.at_read) stages[grp.id] = -1;
  return stages;
}

}  // namespace

std::vector<int> group_stages(const Uses& uses, const KernelPlan& plan) {
  return number_stages(plan, stored_producers(uses, plan));
}

std::vector<std::set<int>> group_readers(const Uses& uses, const KernelPlan& plan) {
  std::vector<std::set<int>> readers(plan.groups.size());
  for (const Group& grp : plan.groups)
    for (const Value* in : grp.inputs()) {
      auto it = uses.producer.find(plan.root(in));
      if (it != uses.producer.end() && it->second != grp.id) readers[it->second].insert(grp.id);
    }
  return readers;
}

void assign_stages(const Uses& uses, KernelPlan* plan) {
  const std::vector<std::set<int>> producers = stored_producers(uses, *plan);
  const std::vector<int> stages = number_stages(*plan, producers);
  for (Group& grp : plan->groups) grp.stage = std::max(stages[grp.id], 0);
  const int max_stage = stages.empty() ? -1 : *std::max_element(stages.begin(), stages.end());
  // A movement computed at read takes its latest reader's stage: its inputs stay live until then
  // (placement.cc).
  const std::vector<std::set<int>> readers = group_readers(uses, *plan);
  std::vector<int> settled(plan->groups.size(), 0);
  std::function<int(int)> read_stage = [&](int id) -> int {
    Group& g = plan->groups[id];
    if (!g.at_read || settled[id]) return g.stage;
    g.stage = 0;
    for (int r : readers[id]) g.stage = std::max(g.stage, read_stage(r));
    settled[id] = 1;
    return g.stage;
  };
  for (const Group& grp : plan->groups) read_stage(grp.id);
  // The invariant the kernel's correctness rests on: what a group reads is written in an
  // earlier stage (a grid barrier apart) or by the group itself.
  for (const Group& grp : plan->groups) {
    if (grp.at_read) continue;
    for (int p : producers[grp.id]) {
      if (head_of(*plan, p) == head_of(*plan, grp.id)) continue;
      MONO_CHECK(plan->groups[p].stage < grp.stage, "group ", grp.id, " (stage ", grp.stage, ") reads the result of group ", p,
                 " in stage ", plan->groups[p].stage);
    }
  }
  plan->stages.assign(max_stage + 1, Stage{});
  for (const Group& grp : plan->groups)
    if (!grp.at_read) plan->stages[grp.stage].groups.push_back(grp.id);
}

}  // namespace mono::planner
