// Attention as one group (plan.h Group::fused): S = MatMul(Q, K) [+ elementwise], P =
// Softmax(S) over the last axis [+ NaN guard], O = MatMul(P, V) [+ epilogue], with S and P read
// by nothing else. One work item carries a batch entry's BM query rows through all three.
#include <algorithm>

#include "compiler/codegen/cost_model.h"
#include "compiler/codegen/planner/steps.h"
#include "compiler/codegen/support.h"

namespace mono::planner {
namespace {

bool has_transpose(const Group& g) {
  for (const Node* e : g.epilogue)
    if (e->op == OpKind::kTranspose) return true;
  return false;
}

Shape batch_dims(const Group& g) {
  const Shape& y = g.anchor->outputs[0]->type.shape;
  return y.size() > 2 ? Shape(y.begin(), y.end() - 2) : Shape{};
}

// A batched MatMul group that can be part of an attention group.
bool attention_gemm(const Group& g) {
  return g.kind == GroupKind::kGemm && g.anchor->op == OpKind::kMatMul && !g.runs_fused() &&
         g.anchor->inputs[0]->type.rank() >= 2 && g.anchor->inputs[1]->type.rank() >= 2;
}

// Every input of the groups `set` that another group writes comes from a group before `head`
// (so the fused group's stage follows all of them).
bool inputs_before(int head, const std::vector<const Group*>& set, const KernelPlan& plan, const Uses& uses) {
  std::set<int> ids;
  for (const Group* g : set) ids.insert(g->id);
  for (const Group* g : set)
    for (const Value* in : g->inputs()) {
      auto it = uses.producer.find(plan.root(in));
      if (it != uses.producer.end() && !ids.count(it->second) && it->second > head) return false;
    }
  return true;
}

// The fixed tiles of the two GEMMs: BM query rows (the smallest of 16, 32, 64 whose items fit
// the grid in one round; 32 at most over streamed keys), all warps along N, BN covering all keys (S) / the head size (O) up to
// 256 columns per tile.
bool attention_tiles(const GemmProblem& s, const GemmProblem& o, bool f16, const KernelContext& ctx, GemmSchedule* t1,
                     GemmSchedule* t3) {
  const int wn = ctx.threads / 32;
  const int quantum = (f16 ? 8 : 4) * wn;
  auto cover = [&](int64_t n) { return static_cast<int>(ceil_div(std::min<int64_t>(n, 256), quantum) * quantum); };
  int bq = 64;
  for (int c : {16, 32}) {
    if (s.batch * ceil_div(s.m, c) <= ctx.grid()) {
      bq = c;
      break;
    }
  }
  // Keys streamed in chunks (FlashStream): 32 rows rather than 64 where neither fits one round.
  // whisper-encoder (6 heads x 1500 rows, 1500 keys) ran 633.6 us against 638.5 with 64 (H100,
  // bench/RESULTS.md session 17).
  if (s.n > kFlashWholeKeys && bq == 64) bq = 32;
  const int bk1 = f16 ? (s.k <= 16 ? 16 : s.k <= 32 ? 32 : 64) : 16;
  *t1 = GemmSchedule{bq, cover(s.n), bk1, 1, wn, 2, 1};
  *t3 = GemmSchedule{bq, cover(o.n), f16 ? 64 : 16, 1, wn, f16 ? 3 : 2, 1};
  return gemm_schedule_problem(f16, *t1, ctx, &s).empty() && gemm_schedule_problem(f16, *t3, ctx, &o).empty();
}

// The causal mask a flash head's scores end with, if any: the last epilogue step of `qk` is an
// Add of the running scores and a constant whose leading dimensions are 1 and whose [rows][keys]
// matrix is 0 where key <= row + (keys - rows) and at most -1e30 (or -inf) elsewhere, with
// keys >= rows (every row keeps its diagonal). Adding it then changes no unmasked score and
// makes every masked probability exactly 0 (exp underflows), which is what skipping those keys
// computes, for finite scores. Also required: the probabilities' epilogue maps 0 to 0 (only NaN
// guards), since masked tiles are skipped in P V. On the H100 GPT-2's attention stage went from
// 4.86 to 3.58 us a layer and the model from 445.9 to 431.8 us (bench/RESULTS.md, run104).
const Node* causal_mask(const KernelPlan& plan, const Group& qk, const Group& sm, int64_t rows, int64_t keys) {
  if (qk.epilogue.empty() || keys < rows) return nullptr;
  // Only NaN guards that keep every number: Where(IsNaN(p), c, p), p the running value (the
  // reversed form Where(IsNaN(p), p, c) would turn a masked 0 into c).
  const Value* p = plan.root(sm.anchor->outputs[0]);
  for (const Node* e : sm.epilogue) {
    if (e->op == OpKind::kIsNaN) continue;
    if (e->op != OpKind::kWhere || !e->inputs[2] || plan.root(e->inputs[2]) != p) return nullptr;
    p = plan.root(e->outputs[0]);
  }
  const Node* add = qk.epilogue.back();
  if (add->op != OpKind::kAdd) return nullptr;
  const Value* running = plan.root(running_value(qk, add));
  const Value* mask = nullptr;
  for (int i = 0; i < 2; ++i)
    if (add->inputs[i] && plan.root(add->inputs[i]) != running) mask = add->inputs[i];
  if (!mask || !plan.root(mask)->is_constant()) return nullptr;
  const Shape& ms = mask->type.shape;
  if (ms.size() < 2 || ms[ms.size() - 2] != rows || ms.back() != keys) return nullptr;
  for (size_t d = 0; d + 2 < ms.size(); ++d)
    if (ms[d] != 1) return nullptr;
  const std::vector<float> v = plan.root(mask)->constant->to_float_vector();
  if (static_cast<int64_t>(v.size()) != rows * keys) return nullptr;
  const int64_t off = keys - rows;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < keys; ++k) {
      const float x = v[r * keys + k];
      if (k <= r + off ? x != 0.0f : !(x <= -1e30f)) return nullptr;
    }
  return add;
}

}  // namespace

void fuse_attention(const Uses& uses, KernelPlan* plan) {
  for (Group& sm : plan->groups) {
    if (sm.kind != GroupKind::kRows || sm.anchor->op != OpKind::kSoftmax || sm.runs_fused() || has_transpose(sm))
      continue;
    const Value* s = plan->root(sm.anchor->inputs[0]);
    auto pit = uses.producer.find(s);
    if (pit == uses.producer.end()) continue;
    Group& qk = plan->groups[pit->second];
    // S = QK must store in its natural layout: no Transpose in its epilogue.
    if (!attention_gemm(qk) || has_transpose(qk) || plan->root(qk.output) != s || !uses.is_private(s)) continue;
    const Value* p = plan->root(sm.output);
    if (!uses.is_private(p)) continue;
    Group* pv = nullptr;
    for (Group& g : plan->groups)
      if (g.kind == GroupKind::kGemm && plan->root(g.anchor->inputs[0]) == p) pv = &g;
    if (!pv || pv->id <= sm.id || !attention_gemm(*pv) || pv->f16 != qk.f16) continue;
    const GemmProblem a = gemm_problem(qk), b = gemm_problem(*pv);
    if (a.batch != b.batch || a.m != b.m || b.k != a.n || row_length(*sm.anchor) != a.n) continue;
    if (batch_dims(qk) != batch_dims(*pv) || pv->anchor->inputs[0]->type.numel() != b.batch * b.m * b.k) continue;
    if (!inputs_before(qk.id, {&qk, &sm, pv}, *plan, uses)) continue;
    GemmSchedule t1, t3;
    if (!attention_tiles(a, b, qk.f16, plan->ctx, &t1, &t3)) continue;
    qk.fused = {sm.id, pv->id};
    sm.fused_into = pv->fused_into = qk.id;
    qk.gemm = t1;
    pv->gemm = t3;
  }
}

// Flash attention (Group::flash) where FlashAttention or FlashStream can run the group: fp16
// operands and probabilities, 256 threads, Q, K and V activations in the arena (not graph inputs
// or outputs: 16-byte aligned rows), K stored [keys][D] (KernelPlan::swapped_last2) and V [keys][D]
// (the same head size D for Q, K and V), D a multiple of 16 up to 128, and its shared memory
// within the context's budget. Up to kFlashWholeKeys keys the item holds all of K and V
// (FlashAttention); beyond, it streams them in chunks of 256 or 128 keys (FlashStream,
// Group::flash_chunk), which needs a softmax without an epilogue (its probabilities are never
// normalized before P V). Sets the head's smem_bytes (its parts keep their own) and raises the
// context's shared memory to it, and its causal mask (Group::causal_mask) where it has one.
void choose_flash(const Uses& uses, KernelPlan* plan) {
  const KernelContext& ctx = plan->ctx;
  for (Group& qk : plan->groups) {
    if (qk.fused.empty()) continue;
    const Group& sm = plan->groups[qk.fused[0]];
    const Group& pv = plan->groups[qk.fused[1]];
    const Value* q = plan->root(qk.anchor->inputs[0]);
    const Value* k = plan->root(qk.anchor->inputs[1]);
    const Value* v = plan->root(pv.anchor->inputs[1]);
    bool ok = qk.f16 && pv.f16 && ctx.threads == 256 && plan->dtype_of(plan->root(sm.output)) == DType::kF16;
    for (const Value* x : {q, k, v})
      ok = ok && plan->dtype_of(x) == DType::kF16 && !x->is_constant() && !uses.graph_outputs.count(x) &&
           (x->producer != nullptr || plan->arena_inputs.count(x));
    ok = ok && plan->swapped_last2.count(k) && !plan->swapped_last2.count(v);
    const GemmProblem a = gemm_problem(qk);
    const int64_t d = a.k, keys = a.n, bq = qk.gemm.bm;
    // One head size D for Q, K, V and O (FlashAttention<D, ..>): V's columns must equal Q's.
    ok = ok && gemm_problem(pv).n == d && d % 16 == 0 && d <= 128 && (bq == 16 || bq == 32 || bq == 64);
    if (!ok) continue;
    const int64_t ld = d + 8, reduce = 2 * 8 * 16 * 4, partial_o = 8 * 16 * d * 4;
    // attention.cuh FlashStream::kSmemBytes for `rows_` query rows and chunks of `c` keys: Q,
    // then two chunks of K and V (the partial O reuse them).
    const auto stream_smem = [&](int64_t rows_, int c) {
      return rows_ * ld * 2 + std::max<int64_t>(4 * c * ld * 2, partial_o) + reduce;
    };
    int64_t smem = 0;
    int chunk = 0;
    if (keys <= kFlashWholeKeys) {
      // attention.cuh FlashAttention::kSmemBytes
      smem = (bq + 2 * ceil_div(keys, 16) * 16) * ld * 2 + partial_o + reduce;
    } else {
      if (!sm.epilogue.empty()) continue;
      for (int c : {256, 128}) {  // the largest chunk that fits
        smem = stream_smem(bq, c);
        chunk = c;
        if (smem <= ctx.smem_limit) break;
      }
    }
    if (smem > ctx.smem_limit) continue;
    // A streamed head whose items take more than one round of the grid runs 128 query rows an
    // item (FlashWg for heads of 64, FlashStream's 8 row blocks otherwise; chunks of 128 keys,
    // emit/attention.cc) where that fits one round: every item streams all of K and V whatever its rows, so fewer, larger items stream
    // them fewer times. whisper-encoder: 6 heads x 1500 rows, 282 items of 32 rows in three
    // rounds against 72 of 128 in one; measured on the H100 (bench/RESULTS.md session 23, same
    // call): 473.8 -> 442.4 us, its attention stages 54.3-56.3 -> 44.3-46.6 us. A 128-row item
    // took ~42 us against ~18.5 for 32 rows: its warps each ran every key tile of a chunk. On
    // the warpgroup MMA (FlashWg, heads of 64; session 24, run211, same call): 442.9 -> 381.4 us,
    // the attention stages 45.6-46.3 -> 30.5-31.0 us.
    const int64_t rows = a.m;
    // Heads up to 64 wide: a warp then holds its scores, O and Q fragments in 112 registers.
    if (chunk > 0 && d <= 64 && a.batch * ceil_div(rows, bq) > ctx.grid() &&
        a.batch * ceil_div(rows, int64_t{128}) <= ctx.grid()) {
      const int64_t wide = d == FlashWgShape::kHead ? FlashWgShape::kSmemBytes : stream_smem(128, 128);
      if (wide <= ctx.smem_limit) {
        smem = wide;
        chunk = 128;
        qk.gemm.bm = 128;
        qk.gemm.bn = 128;  // S a chunk at a time: the printed tile, and a valid schedule
        plan->groups[qk.fused[1]].gemm.bm = 128;  // (choose_schedules then counts the items)
      }
    }
    qk.flash = true;
    qk.flash_chunk = chunk;
    qk.causal_mask = causal_mask(*plan, qk, sm, a.m, keys);
    qk.smem_bytes = static_cast<int>(smem);
    plan->ctx.smem_bytes = std::max(plan->ctx.smem_bytes, qk.smem_bytes);
  }
}

}  // namespace mono::planner
