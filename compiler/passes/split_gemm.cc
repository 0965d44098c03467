// Split(Gemm(a, W)) along the output's last axis -> one Gemm per part, with W cut at compile
// time. The fused Q/K/V projection of GPT-2 (Conv1D c_attn, then split into q, k, v) becomes
// three projections whose results each go straight into their own layout (Reshape/Transpose
// fuse into each GEMM's epilogue), instead of a GEMM, a Split and three Transposes, each its
// own stage of the kernel. Also for MatMul(a, W) with a constant [K][N] W.
//
//   y = Gemm(a, W [K][N] or [N][K] with transB, C)     (or MatMul(a, W [K][N]))
//   y' = Reshape...(y)        zero or more Reshapes that keep the last axis
//   p_0, .., p_k = Split(y', axis = last)
// ->
//   p_i = Reshape(Gemm(a, W[:, cols_i], C[cols_i]), shape of p_i)
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

#include <cstring>

namespace mono {
namespace {

// Columns [c0, c0 + n) of a constant matrix stored [rows][cols] (cols_axis = 1) or, transposed,
// [cols][rows] (cols_axis = 0).
Tensor slice_columns(const Tensor& t, int cols_axis, int64_t c0, int64_t n) {
  const Shape& s = t.shape();
  const size_t es = dtype_size(t.dtype());
  const auto* src = static_cast<const unsigned char*>(t.raw());
  if (cols_axis == 0) {  // rows of the stored tensor: one contiguous block
    Tensor out(t.dtype(), Shape{n, s[1]});
    std::memcpy(out.mutable_raw(), src + static_cast<size_t>(c0 * s[1]) * es, static_cast<size_t>(n * s[1]) * es);
    return out;
  }
  Tensor out(t.dtype(), Shape{s[0], n});
  auto* dst = static_cast<unsigned char*>(out.mutable_raw());
  for (int64_t r = 0; r < s[0]; ++r)
    std::memcpy(dst + static_cast<size_t>(r * n) * es, src + static_cast<size_t>(r * s[1] + c0) * es,
                static_cast<size_t>(n) * es);
  return out;
}

// The bias C of a Gemm for output columns [c0, c0 + n): C broadcasts against [M][N].
bool slice_bias(const Tensor& c, int64_t N, int64_t c0, int64_t n, Tensor* out) {
  const Shape& s = c.shape();
  if (c.numel() == 1) {
    *out = c;
    return true;
  }
  if (s.empty() || s.back() != N) return false;
  if (s.size() == 1) {
    *out = slice_columns(c.reshaped({1, N}), 1, c0, n).reshaped({n});
    return true;
  }
  if (s.size() == 2) {
    *out = slice_columns(c, 1, c0, n);
    return true;
  }
  return false;
}

bool split_one(Graph& g, Node* split) {
  Value* x = split->inputs[0];
  const int64_t rank = x->type.rank();
  int64_t axis = 0;
  if (const AttrValue* a = split->attr("axis")) axis = std::get<int64_t>(*a);
  if (axis < 0) axis += rank;
  if (rank < 1 || axis != rank - 1) return false;
  // Back through Reshapes that keep the last axis, each used only on this path.
  Value* y = x;
  while (Node* r = produced_by(y, OpKind::kReshape)) {
    if (use_count(g, y) != 1 || r->inputs[0]->type.rank() < 1 || r->inputs[0]->type.shape.back() != x->type.shape.back())
      return false;
    y = r->inputs[0];
  }
  if (use_count(g, y) != 1 || !y->producer) return false;
  Node* mm = y->producer;
  const bool gemm = mm->op == OpKind::kGemm;
  if (!gemm && mm->op != OpKind::kMatMul) return false;
  Value* w = mm->inputs[1];
  if (!w || !w->is_constant() || w->type.rank() != 2) return false;
  int cols_axis = 1;
  if (gemm) {
    const AttrValue* ta = mm->attr("transA");
    if (ta && std::get<int64_t>(*ta) != 0) return false;
    const AttrValue* tb = mm->attr("transB");
    if (tb && std::get<int64_t>(*tb) != 0) cols_axis = 0;
  }
  const int64_t N = w->type.shape[cols_axis];
  if (y->type.shape.back() != N) return false;
  Value* c = gemm && mm->num_inputs() > 2 ? mm->inputs[2] : nullptr;
  if (c && !c->is_constant()) return false;
  // Every output must be wanted (a dropped part needs no GEMM, but keep the rewrite simple).
  for (const Value* p : split->outputs)
    if (!p) return false;
  std::vector<Tensor> ws, cs;
  int64_t c0 = 0;
  for (const Value* p : split->outputs) {
    const int64_t n = p->type.shape.back();
    ws.push_back(slice_columns(*w->constant, cols_axis, c0, n));
    if (c) {
      Tensor ci;
      if (!slice_bias(*c->constant, N, c0, n, &ci)) return false;
      cs.push_back(std::move(ci));
    }
    c0 += n;
  }
  if (c0 != N) return false;
  for (size_t i = 0; i < split->outputs.size(); ++i) {
    Value* p = split->outputs[i];
    const std::string base = split->name + ".part" + std::to_string(i);
    std::vector<Value*> ins = {mm->inputs[0], g.add_constant(base + ".weight", std::move(ws[i]))};
    if (c) ins.push_back(g.add_constant(base + ".bias", std::move(cs[i])));
    Node* part = g.insert_node_before(split, mm->op, base, ins, {base + ".y"}, mm->opset);
    part->attrs = mm->attrs;
    Shape ys = y->type.shape;
    ys.back() = p->type.shape.back();
    part->outputs[0]->type = TensorType{y->type.dtype, ys};
    g.replace_all_uses(p, insert_reshape(g, split, base + ".reshape", part->outputs[0], p->type.shape, base, base + ".r"));
  }
  return true;
}

}  // namespace

bool split_gemm(Graph& g) {
  bool changed = false;
  std::vector<Node*> splits;
  for (const auto& n : g.nodes())
    if (n->op == OpKind::kSplit) splits.push_back(n.get());
  for (Node* s : splits) changed |= split_one(g, s);
  if (changed) g.remove_dead_code();
  return changed;
}

}  // namespace mono
