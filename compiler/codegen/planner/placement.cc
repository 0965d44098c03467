// Placement: graph inputs and outputs are the caller's buffers; constants are packed into the
// weights blob once per packing; intermediates share one arena, a buffer live from the stage
// that writes it to the last stage that reads it (stages are separated by barriers, so a later
// stage may reuse it); split-K workspaces and tile counters come first.
#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>

#include "compiler/codegen/cost_model.h"
#include "compiler/codegen/planner/steps.h"
#include "compiler/codegen/support.h"
#include "compiler/support/error.h"

namespace mono::planner {
namespace {

// `packed`: the (constant, packing) pairs already in the blob (a lookup, not a scan of every
// constant: planning stays linear in the graph's size).
void pack(KernelPlan* plan, const Value* v, const Packing& packing, std::set<std::pair<const Value*, Packing>>* packed) {
  if (!packed->insert({v, packing}).second) return;
  const size_t bytes = packed_bytes(*plan, *v, packing);
  plan->constants.push_back({v, packing, plan->weights_bytes, bytes});
  plan->weights_bytes += bytes;
  plan->placement[v] = {Placement::kWeights, 0, 0};
}

// A buffer of the arena: written in stage `first`, read up to stage `last`.
struct Live {
  const Value* v;
  int first, last;
  size_t bytes;
};

// Split-K workspaces (splits partial tiles per output tile: split_k.cuh) and tile counters (zero
// between uses: the reducer resets its counter), so that GEMMs of different stages share one
// region; those of one stage sit side by side. Returns the workspace bytes; sets sync_words.
size_t place_split_k(KernelPlan* plan) {
  size_t ws_bytes = 0, counter_words = 0;
  for (const Stage& st : plan->stages) {
    size_t ws = 0, cw = 0;
    for (int gid : st.groups) {
      Group& grp = plan->groups[gid];
      if (grp.gemm.splits <= 1 || (grp.kind != GroupKind::kGemm && grp.kind != GroupKind::kConvGemm)) continue;
      const GemmProblem s = gemm_problem(grp);
      grp.workspace_offset = ws;
      grp.counters_offset = cw;
      const size_t tiles = static_cast<size_t>(s.batch * ceil_div(s.m, grp.gemm.bm) * ceil_div(s.n, grp.gemm.bn));
      ws += align_up(tiles * grp.gemm.splits * grp.gemm.bm * grp.gemm.bn * 4, 256);
      cw += tiles;
    }
    ws_bytes = std::max(ws_bytes, ws);
    counter_words = std::max(counter_words, cw);
  }
  for (Group& grp : plan->groups) grp.counters_offset += kBarrierWords;
  plan->sync_words = kBarrierWords + counter_words;
  return ws_bytes;
}

}  // namespace

void place_tensors(const Graph& graph, KernelPlan* plan) {
  std::set<std::pair<const Value*, Packing>> packed;
  for (const auto& c : plan->constants) packed.insert({c.value, c.packing});
  // Graph inputs and outputs.
  for (size_t i = 0; i < graph.inputs.size(); ++i)
    if (!plan->arena_inputs.count(graph.inputs[i]))  // those are placed with the intermediates
      plan->placement[graph.inputs[i]] = {Placement::kInput, 0, static_cast<int>(i)};
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    const Value* r = plan->root(graph.outputs[i]);
    if (!r->producer || plan->placement.count(r)) {  // an input, a constant or another output
      plan->output_copies.push_back({r, static_cast<int>(i)});
      if (r->is_constant()) pack(plan, r, Packing{}, &packed);
      continue;
    }
    plan->placement[r] = {Placement::kOutput, 0, static_cast<int>(i)};
  }
  // Movements computed where they are read: no bytes.
  for (const auto& [v, id] : plan->computed) plan->placement[v] = {Placement::kComputed, 0, 0};
  // Constants: packed per use.
  for (const Group& grp : plan->groups) {
    auto use = [&](const Node* n) {
      for (int i = 0; i < n->num_inputs(); ++i) {
        const Value* v = n->inputs[i] ? plan->root(n->inputs[i]) : nullptr;
        if (v && v->is_constant()) pack(plan, v, plan->packing(*n, i), &packed);
      }
    };
    use(grp.anchor);
    for (const Node* e : grp.epilogue)
      if (e != grp.causal_mask) use(e);  // a causal mask applied by index is not read
  }
  // Intermediates written by a group and read by later stages.
  std::vector<Live> live;
  std::map<const Value*, size_t> index;
  auto written = [&](const Value* v, int stage) {
    v = plan->root(v);
    if (plan->placement.count(v) || v->is_constant() || index.count(v)) return;
    index[v] = live.size();
    live.push_back({v, stage, stage, align_up(static_cast<size_t>(v->type.numel()) * dtype_size(plan->dtype_of(v)), 256)});
  };
  for (const Value* v : graph.inputs)  // copied in before stage 0: live from stage 0
    if (plan->arena_inputs.count(v)) written(v, 0);
  for (const Group& grp : plan->groups) {
    for (const Value* out : grp.anchor->outputs)
      if (out) written(out, grp.stage);
    if (!grp.epilogue.empty()) written(grp.output, grp.stage);
  }
  for (const Group& grp : plan->groups)
    for (const Value* in : grp.inputs()) {
      auto it = index.find(plan->root(in));
      if (it != index.end()) live[it->second].last = std::max(live[it->second].last, grp.stage);
    }
  const size_t ws_bytes = place_split_k(plan);
  // First fit over stages: the candidate offsets are the workspace's end and the end of each
  // block still live when the buffer is written; it takes the first that overlaps none of them.
  // Blocks dead by then are dropped for good (buffers come in stage order): the end of a dead
  // block is never a better offset than the end of the live block below it, so the result is
  // the first fit over every placed block, in time linear in the number of buffers.
  std::sort(live.begin(), live.end(),
            [](const Live& a, const Live& b) { return a.first < b.first || (a.first == b.first && a.bytes > b.bytes); });
  struct Block {
    size_t off, bytes;
    int last;
  };
  std::vector<Block> used;
  size_t top = ws_bytes;  // workspace first
  for (const Live& l : live) {
    used.erase(std::remove_if(used.begin(), used.end(), [&](const Block& b) { return b.last < l.first; }), used.end());
    size_t off = SIZE_MAX;
    std::vector<size_t> candidates = {ws_bytes};
    for (const Block& b : used) candidates.push_back(b.off + b.bytes);
    std::sort(candidates.begin(), candidates.end());
    for (size_t c : candidates) {
      bool clash = false;
      for (const Block& b : used)
        if (b.last >= l.first && c < b.off + b.bytes && b.off < c + l.bytes) clash = true;
      if (!clash) {
        off = c;
        break;
      }
    }
    used.push_back({off, l.bytes, l.last});
    plan->placement[l.v] = {Placement::kArena, off, 0};
    top = std::max(top, off + l.bytes);
  }
  plan->arena_bytes = std::max<size_t>(top, 256);
}

}  // namespace mono::planner
