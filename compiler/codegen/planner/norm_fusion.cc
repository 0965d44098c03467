// A LayerNormalization read only by GEMMs runs inside them (plan.h Group::norm). In a pre-LN
// transformer (GPT-2, ViT) each layer's two LayerNorms feed only the Q/K/V and FFN1 GEMMs; as
// groups of their own they cost a stage and a grid barrier each. Over K,
//   LN(x) W = rstd (x (diag(gamma) W) - mean c1) + c2,
// with c1[n] = sum_k gamma_k W[k][n] and c2[n] = sum_k beta_k W[k][n]: the GEMM runs on x with
// weights W' = diag(gamma) W, and its items compute mean and rstd of their rows from the A tiles
// they stream anyway (gemm_wg.cuh NormA). c1 sums W' as stored (fp16-rounded), so that the mean's
// term cancels what the tensor cores accumulated from the same values.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "compiler/codegen/cost_model.h"
#include "compiler/codegen/planner/steps.h"
#include "compiler/codegen/support.h"
#include "compiler/ops/layer_normalization.h"
#include "compiler/ops/op.h"

namespace mono::planner {
namespace {

double max_abs(const Tensor& t) {
  double m = 0;
  for (float v : t.to_float_vector()) m = std::max(m, std::fabs(static_cast<double>(v)));
  return m;
}

const Value* new_constant(KernelPlan* plan, const std::string& name, Tensor t, DType device) {
  auto v = std::make_shared<Value>();
  v->name = name;
  v->type = t.type();
  v->constant = std::make_shared<const Tensor>(std::move(t));
  plan->device_dtype[v.get()] = device;
  plan->derived.push_back(v);
  return v.get();
}

// The GEMM group `g` reads a LayerNorm's output of row length `k` as its A, with constant
// weights of its own that it could read normalized: W' in range of fp16, batch 1.
bool norm_reader(const Uses& uses, const KernelPlan& plan, const Group& g, int64_t k, double w_scale_max) {
  if (g.kind != GroupKind::kGemm || !g.f16 || g.runs_fused() || g.squeeze >= 0 || g.norm >= 0) return false;
  const Node& n = *g.anchor;
  if (n.op != OpKind::kMatMul && n.op != OpKind::kGemm) return false;
  if (n.op == OpKind::kGemm && node_attrs(n).attr_int("transA")) return false;
  const Value* w = n.input(1) ? plan.root(n.inputs[1]) : nullptr;
  if (!w || !w->is_constant() || n.inputs[1]->type.rank() != 2 || w->type.shape != n.inputs[1]->type.shape) return false;
  if (uses.of(w) != 1 || uses.graph_outputs.count(w) || plan.alias.count(w)) return false;
  const GemmProblem p = gemm_problem(g);
  if (p.batch != 1 || p.k != k) return false;
  GemmProblem q = p;  // a tile of the menu must run it
  q.norm = true;
  bool tile = false;
  for (const GemmSchedule& t : default_gemm_tiles(true, plan.ctx, false))
    tile = tile || gemm_schedule_problem(true, wgmma_schedule(t, plan.ctx), plan.ctx, &q).empty();
  if (!tile) return false;
  return w_scale_max * max_abs(*w->constant) <= kMaxFp16Range;  // W' stays finite in fp16
}

// W' = diag(gamma) W (rounded as the weights are stored), c1 = its column sums, c2 = beta W.
void derive_constants(const Node& ln, KernelPlan* plan, Group* g) {
  const Node& n = *g->anchor;
  const Value* w = plan->root(n.inputs[1]);
  const bool nk = n.op == OpKind::kGemm && node_attrs(n).attr_int("transB");  // W stored [N][K]
  const int64_t K = nk ? w->type.shape[1] : w->type.shape[0], N = nk ? w->type.shape[0] : w->type.shape[1];
  const DType wt = plan->dtype_of(w);
  auto stored = [&](float v) { return wt == DType::kF16 ? half_to_float(float_to_half(v)) : v; };
  const std::vector<float> wv = w->constant->to_float_vector();
  const std::vector<float> gamma = plan->root(ln.inputs[1])->constant->to_float_vector();
  std::vector<float> beta;
  if (ln.input(2)) beta = plan->root(ln.inputs[2])->constant->to_float_vector();
  std::vector<float> scaled(wv.size());
  std::vector<double> c1(N, 0.0), c2(N, 0.0);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) {
      const size_t i = static_cast<size_t>(nk ? j * K + k : k * N + j);
      scaled[i] = stored(gamma[k] * wv[i]);
      c1[j] += scaled[i];
      if (!beta.empty()) c2[j] += static_cast<double>(beta[k]) * stored(wv[i]);
    }
  const std::string base = w->name + ".ln";
  const Value* w2 = new_constant(plan, base, Tensor::from_floats(w->type.shape, scaled), wt);
  plan->alias[w] = w2;
  g->norm_c1 = new_constant(plan, base + ".c1", Tensor::from_floats({N}, std::vector<float>(c1.begin(), c1.end())), DType::kF32);
  g->norm_c2 = new_constant(plan, base + ".c2", Tensor::from_floats({N}, std::vector<float>(c2.begin(), c2.end())), DType::kF32);
}

}  // namespace

void fuse_layer_norms(const Uses& uses, KernelPlan* plan) {
  // The items' statistics need whole warpgroups (wgmma) and at most 8 threads per row of a
  // 64-row tile.
  if (plan->ctx.threads % 128 != 0 || plan->ctx.threads > 512) return;
  if (std::getenv("MONO_AB_NO_LN_FUSION")) return;  // TEMPORARY A/B switch
  // Each root value's readers: GEMM groups reading it as their A (anchor input 0), and whether
  // anything else reads it.
  std::map<const Value*, std::vector<int>> gemm_readers;
  std::set<const Value*> other_reads;
  for (const Group& g : plan->groups) {
    auto scan = [&](const Node* n, bool anchor) {
      for (int i = 0; i < n->num_inputs(); ++i) {
        if (!n->inputs[i]) continue;
        const Value* v = plan->root(n->inputs[i]);
        if (anchor && i == 0 && g.kind == GroupKind::kGemm) gemm_readers[v].push_back(g.id);
        else other_reads.insert(v);
      }
    };
    scan(g.anchor, true);
    for (const Node* e : g.epilogue) scan(e, false);
  }
  for (Group& ln : plan->groups) {
    const Node& n = *ln.anchor;
    if (ln.kind != GroupKind::kRows || n.op != OpKind::kLayerNormalization || !ln.epilogue.empty() || ln.runs_fused())
      continue;
    const int64_t rank = n.inputs[0]->type.rank();
    if (rank < 2 || layer_norm_axis(n) != rank - 1) continue;
    bool stats_read = false;  // the optional Mean / InvStdDev outputs
    for (size_t i = 1; i < n.outputs.size(); ++i) stats_read = stats_read || (n.outputs[i] && uses.of(plan->root(n.outputs[i])));
    if (stats_read) continue;
    const int64_t k = layer_norm_row_length(n);
    const Value* x = plan->root(n.inputs[0]);
    const Value* y = plan->root(n.outputs[0]);
    const Value* gamma = plan->root(n.inputs[1]);
    const Value* beta = n.input(2) ? plan->root(n.inputs[2]) : nullptr;
    if (!gamma->is_constant() || gamma->type.numel() != k || (beta && (!beta->is_constant() || beta->type.numel() != k)))
      continue;
    if (plan->dtype_of(x) != DType::kF16 || plan->dtype_of(y) != DType::kF16 || x->is_constant()) continue;
    if (uses.graph_outputs.count(y) || other_reads.count(y)) continue;
    auto it = gemm_readers.find(y);
    if (it == gemm_readers.end() || static_cast<int>(it->second.size()) != uses.of(y)) continue;
    std::vector<int> readers = it->second;
    std::sort(readers.begin(), readers.end());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    if (static_cast<int>(readers.size()) != uses.of(y)) continue;  // a GEMM reading y twice (as A and B)
    const double gamma_max = max_abs(*gamma->constant);
    bool ok = true;
    for (int id : readers) ok = ok && norm_reader(uses, *plan, plan->groups[id], k, gamma_max);
    if (!ok) continue;
    // Each reader now reads x through a tensor map: the path that runs on wgmma.
    plan->alias[y] = x;
    for (int id : readers) ok = ok && wgmma_operands(*plan, plan->groups[id], &uses.graph_outputs);
    if (!ok) {
      plan->alias.erase(y);
      continue;
    }
    for (int id : readers) {
      derive_constants(n, plan, &plan->groups[id]);
      plan->groups[id].norm = ln.id;
    }
    ln.fused_into = readers.front();
  }
}

}  // namespace mono::planner
