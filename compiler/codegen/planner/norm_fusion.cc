// LayerNormalization folded into the GEMMs that read it: a LayerNormalization whose output is
// the A operand of wgmma GEMMs loses its group (and its stage and grid barrier). Each of those
// GEMM groups reads the normalization's input x as its A, as it is, with the weights folded on
// the host (W' = diag(gamma) W and two fp32 vectors, Packing::Fold); its tiles combine x's row
// statistics (KernelPlan::row_stats: mean and M2 per row and 32 columns) into each row's mean and
// 1/stddev and correct the accumulators (Group::norm; GemmWg with NormK, gemm_wg.cuh,
// loaders.cuh). Those statistics are written once, where x is: by the GEMM group that produces
// x (after its epilogue, device row_stats.cuh; Group::writes_row_stats), or, for x a kernel input
// copied into the arena, by the grid before the first stage. A LayerNormalization whose input
// comes from anything else keeps its stage. Where the output has other readers in the arena
// (BERT's residual adds), the first of the GEMM groups also stores it (norm_writes), its tiles
// sharing the rows' chunks, and those readers run in a later stage, as before.
//
// On the H100 the LayerNormalization stages took 1.8 us each plus a 0.77 us barrier, 24 times
// in bert-base and gpt2 (bench/RESULTS.md, run76). Two folds that computed the statistics in
// every reading tile were slower (session 6: each tile normalized its A panel; session 7: each
// tile summed its rows from the k tiles): 36 to 48 column tiles repeated the same work.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <vector>

#include "compiler/codegen/cost_model.h"
#include "compiler/codegen/planner/steps.h"
#include "compiler/codegen/support.h"
#include "compiler/ops/op.h"
#include "compiler/support/error.h"

namespace mono::planner {
namespace {

bool is_layer_norm(const KernelPlan& plan, const Uses& uses, const Group& g) {
  if (g.kind != GroupKind::kRows || g.anchor->op != OpKind::kLayerNormalization || !g.epilogue.empty()) return false;
  const Node& n = *g.anchor;
  for (size_t k = 1; k < n.outputs.size(); ++k)
    if (n.outputs[k]) return false;  // Mean / InvStdDev wanted
  const Value* x = n.inputs[0];
  const int64_t len = row_length(n);
  if (x->type.shape.empty() || len != x->type.shape.back() || len % 8 != 0) return false;
  if (plan.dtype_of(x) != DType::kF16 || plan.dtype_of(n.outputs[0]) != DType::kF16) return false;
  // x must be an activation of the arena: read through a tensor map.
  const Value* rx = plan.root(x);
  if (rx->is_constant() || !(rx->producer || plan.arena_inputs.count(rx)) || uses.graph_outputs.count(rx)) return false;
  for (int i : {1, 2}) {
    const Value* p = n.input(i);
    if (!p) {
      if (i == 1) return false;
      continue;
    }
    if (!plan.root(p)->is_constant() || p->type.numel() != len) return false;
  }
  return true;
}

// Whether GEMM group `g` can take LayerNormalization `n` (output `y`, a root) in front of its A:
// a wgmma GEMM (one fp16 [M][K] matrix, K the normalized length, constant 2-D weights) that
// reads y as A only, with a tile without split-K whose statistics fit.
bool takes_norm(const KernelPlan& plan, const Group& g, const Node& n, const Value* y) {
  if (g.kind != GroupKind::kGemm || g.in_attention() || g.norm || !g.f16) return false;
  const Node& a = *g.anchor;
  if ((a.op != OpKind::kMatMul && a.op != OpKind::kGemm) || plan.root(a.inputs[0]) != y) return false;
  for (const Node* e : g.epilogue)
    for (const Value* in : e->inputs)
      if (in && plan.root(in) == y) return false;
  if (plan.root(a.inputs[1]) == y) return false;
  const Value* w = plan.root(a.inputs[1]);
  if (!w->is_constant() || (a.op == OpKind::kMatMul && a.inputs[1]->type.rank() != 2)) return false;
  const Shape& as = a.inputs[0]->type.shape;
  if (as.size() < 2 || (a.op == OpKind::kGemm && node_attrs(a).attr_int("transA"))) return false;
  const int64_t M = as[as.size() - 2], K = as.back();
  if (K != row_length(n) || shape_numel(a.outputs[0]->type.shape) != M * a.outputs[0]->type.shape.back()) return false;
  Group with = g;
  with.norm = &n;
  const GemmProblem p = gemm_problem(with);
  for (const GemmSchedule& t : default_gemm_tiles(true, plan.ctx))
    for (int bk : {128, t.bk}) {
      GemmSchedule c = t;
      c.bk = bk;
      if (gemm_schedule_problem(true, wgmma_schedule(c, plan.ctx), plan.ctx, &p).empty()) return true;
    }
  return false;
}

// The GEMM group that writes all of x (a root) as one fp16 [M][N] row-major matrix, N = `len`,
// and can write its row statistics after its epilogue (GemmF16 / GemmWg with `rs`; its tiles
// keep to 32-column multiples, gemm_schedule_problem), or null.
Group* stats_writer(const Uses& uses, KernelPlan* plan, const Value* x, int64_t len) {
  auto it = uses.producer.find(x);
  if (it == uses.producer.end()) return nullptr;
  Group& g = plan->groups[it->second];
  if (g.kind != GroupKind::kGemm || g.in_attention() || !g.f16 || g.norm || plan->root(g.output) != x) return nullptr;
  for (const Node* e : g.epilogue)
    if (e->op == OpKind::kTranspose) return nullptr;
  if (plan->swapped_last2.count(x) || plan->dtype_of(x) != DType::kF16 || len % 8 != 0) return nullptr;
  const GemmProblem p = gemm_problem(g);
  if (p.conv || p.batch != 1 || p.n != len || p.m * p.n != x->type.numel()) return nullptr;
  return &g;
}

}  // namespace

void fold_layer_norms(const std::set<const Value*>& row_stats, Uses* uses, KernelPlan* plan) {
  // Row statistics asked for by a tuning fragment (PlanOptions::row_stats).
  for (const Value* v : row_stats) {
    const Value* x = plan->root(v);
    if (Group* w = x->type.rank() > 0 ? stats_writer(*uses, plan, x, x->type.shape.back()) : nullptr) {
      w->writes_row_stats = true;
      plan->row_stats[x] = 0;
    }
  }
  if (std::getenv("MONO_AB_NO_NORM_FOLD")) return;  // TEMPORARY: the A/B of this change on the GPU
  std::vector<int> folded;            // LayerNormalization groups that go
  std::map<int, int> writer_of;       // folded group -> the GEMM group that stores its output, if any
  for (const Group& ln : plan->groups) {
    if (!is_layer_norm(*plan, *uses, ln)) continue;
    const Node& n = *ln.anchor;
    const Value* y = plan->root(n.outputs[0]);
    std::vector<int> gemms;
    for (const Group& g : plan->groups)
      if (&g != &ln && takes_norm(*plan, g, n, y)) gemms.push_back(g.id);
    if (gemms.empty()) continue;
    // Readers besides the GEMMs (each GEMM reads y once, as A), or y a graph output: the first
    // GEMM group writes y (a tuning fragment's y is its output where the model reads it later).
    // x's row statistics: from the GEMM that writes x, or computed before the first stage for
    // an arena input; from nothing else.
    const Value* x = plan->root(n.inputs[0]);
    Group* writer = stats_writer(*uses, plan, x, row_length(n));
    if (!writer && !plan->arena_inputs.count(x)) continue;
    if (writer) writer->writes_row_stats = true;
    plan->row_stats[x] = 0;
    for (int id : gemms) plan->groups[id].norm = &n;
    folded.push_back(ln.id);
    if (uses->of(y) > static_cast<int>(gemms.size()) || uses->graph_outputs.count(y)) {
      plan->groups[gemms[0]].norm_writes = true;
      writer_of[ln.id] = gemms[0];
    }
  }
  if (folded.empty()) return;
  // Renumber the groups that stay.
  std::vector<int> new_id(plan->groups.size(), -1);
  std::vector<Group> kept;
  for (const Group& g : plan->groups) {
    if (std::find(folded.begin(), folded.end(), g.id) != folded.end()) continue;
    new_id[g.id] = static_cast<int>(kept.size());
    kept.push_back(g);
  }
  for (Group& g : kept) {
    g.id = new_id[g.id];
    if (g.fused_into >= 0) g.fused_into = new_id[g.fused_into];
    for (int& f : g.fused) f = new_id[f];
  }
  for (auto it = uses->producer.begin(); it != uses->producer.end();) {
    const int old = it->second;
    if (new_id[old] >= 0) {
      it->second = new_id[old];
      ++it;
    } else if (writer_of.count(old)) {
      it->second = new_id[writer_of[old]];
      ++it;
    } else {
      it = uses->producer.erase(it);
    }
  }
  plan->groups = std::move(kept);
}

}  // namespace mono::planner
