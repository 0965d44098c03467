// Data movements computed where they are read. A Slice, Concat, Pad or Transpose that only
// rearranges elements costs a stage of its own (a grid barrier and a pass through memory)
// although its readers could find each element themselves: Swin's shifted windows are Pad,
// two Slices and a Concat per rolled axis, then the window partition's Transpose; its patch
// merging is four strided Slices and a Concat. Such a group is marked at_read when every group
// that reads its result is a pointwise group that loads elements one at a time by a flat index
// (emit/expressions.cc Expressions::load), or is itself computed at read; each reader then
// computes the elements it loads from the movement's inputs, and the chain up to the first
// materialized value costs no stage.
#include <algorithm>
#include <set>

#include "compiler/codegen/planner/steps.h"
#include "compiler/codegen/support.h"

namespace mono::planner {
namespace {

bool is_movement(OpKind op) {
  return op == OpKind::kSlice || op == OpKind::kConcat || op == OpKind::kPad || op == OpKind::kTranspose;
}

// Pointwise groups whose every load of another group's result goes through Expressions::load
// at a flat index (emit/pointwise.cc: the element loop, and the Concat of channel vectors).
bool loads_by_index(const Group& g) {
  if (g.kind != GroupKind::kPointwise || g.runs_fused() || g.gate || g.squeeze >= 0) return false;
  const Node& n = *g.anchor;
  if (gemv_form(n) || padded_to_channels_last(g) || n.outputs.size() != 1) return false;
  return is_movement(n.op) || is_epilogue_op(n.op) || n.op == OpKind::kExpand || n.op == OpKind::kTile;
}

// Whether group g could be computed at read, its readers aside.
bool movement_alone(const KernelPlan& plan, const Uses& uses, const Group& g) {
  if (!loads_by_index(g) || !is_movement(g.anchor->op) || !g.epilogue.empty()) return false;
  const Value* out = plan.root(g.output);
  return is_float(plan.dtype_of(out)) && !uses.graph_outputs.count(out) && !plan.swapped_last2.count(out) &&
         !plan.arena_inputs.count(out);
}

}  // namespace

void compute_at_read(const Uses& uses, KernelPlan* plan) {
  const std::vector<std::set<int>> readers = group_readers(uses, *plan);
  std::set<int> candidates;
  for (const Group& g : plan->groups)
    if (movement_alone(*plan, uses, g) && !readers[g.id].empty()) candidates.insert(g.id);
  // Drop candidates read by a group that neither loads by index nor is a candidate, until none
  // is left to drop.
  for (bool dropped = true; dropped;) {
    dropped = false;
    for (auto it = candidates.begin(); it != candidates.end();) {
      bool ok = true;
      for (int r : readers[*it]) ok = ok && (candidates.count(r) || loads_by_index(plan->groups[r]));
      if (ok) {
        ++it;
      } else {
        it = candidates.erase(it);
        dropped = true;
      }
    }
  }
  // Computed at read, a movement saves a grid barrier only where it would have made its readers
  // wait a stage; elsewhere it costs its readers' index arithmetic and loads for nothing (the
  // zoo's llama: its rotary embedding's Slices ran in the stage of the Neg beside them, and
  // computed at read made it 187.2 -> 188.6 us, H200, run231). So each is kept only if storing
  // it instead would lengthen the kernel, tried one at a time from the last. Each try numbers
  // every stage again, so past kMaxWork candidates x groups (swin-t: 76 x 241) planning time
  // would grow with the square of a graph of movements: there every candidate stays computed,
  // which never lengthens the kernel.
  constexpr size_t kMaxWork = 4'000'000;
  for (int id : candidates) plan->groups[id].at_read = true;
  const bool weigh = candidates.size() * plan->groups.size() <= kMaxWork;
  auto stage_count = [&] {
    const std::vector<int> stages = group_stages(uses, *plan);
    return stages.empty() ? 0 : *std::max_element(stages.begin(), stages.end()) + 1;
  };
  const int fewest = weigh ? stage_count() : 0;
  for (auto it = candidates.rbegin(); weigh && it != candidates.rend(); ++it) {
    plan->groups[*it].at_read = false;
    if (stage_count() > fewest) plan->groups[*it].at_read = true;
  }
  for (int id : candidates)
    if (plan->groups[id].at_read) plan->computed[plan->root(plan->groups[id].output)] = id;
}

}  // namespace mono::planner
