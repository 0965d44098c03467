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
// and the same for parts selected by Gathers (select_parts, below).
#include "compiler/ops/shape_util.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

#include <algorithm>
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

// The product a GEMM node computes: y = mm(a, W) with W a constant 2-D matrix (MatMul: [K][N];
// Gemm: [K][N] or, transB, [N][K]) and an optional constant bias C; N its output columns.
struct Product {
  Node* mm = nullptr;
  Value* w = nullptr;
  Value* c = nullptr;
  int cols_axis = 1;  // W's axis of the output columns
  int64_t N = 0;
};

bool product_of(Value* y, Product* out) {
  Node* mm = y->producer;
  if (!mm || (mm->op != OpKind::kGemm && mm->op != OpKind::kMatMul)) return false;
  const bool gemm = mm->op == OpKind::kGemm;
  Product p;
  p.mm = mm;
  p.w = mm->inputs[1];
  if (!p.w || !p.w->is_constant() || p.w->type.rank() != 2) return false;
  if (gemm) {
    const AttrValue* ta = mm->attr("transA");
    if (ta && std::get<int64_t>(*ta) != 0) return false;
    const AttrValue* tb = mm->attr("transB");
    if (tb && std::get<int64_t>(*tb) != 0) p.cols_axis = 0;
  }
  p.N = p.w->type.shape[p.cols_axis];
  if (y->type.rank() < 1 || y->type.shape.back() != p.N) return false;
  p.c = gemm && mm->num_inputs() > 2 ? mm->inputs[2] : nullptr;
  if (p.c && !p.c->is_constant()) return false;
  *out = p;
  return true;
}

// The weights (and bias) of the product's output columns [c0, c0 + n).
bool part_operands(const Product& p, int64_t c0, int64_t n, Tensor* w, Tensor* c) {
  *w = slice_columns(*p.w->constant, p.cols_axis, c0, n);
  return !p.c || slice_bias(*p.c->constant, p.N, c0, n, c);
}

// Inserts before `at` the product of columns [c0, c0 + n) (operands from part_operands), named
// BASE, reshaped to `shape`; returns the reshaped value.
Value* insert_part(Graph& g, Node* at, const Product& p, const std::string& base, Tensor w, Tensor c, int64_t n,
                   const Shape& shape) {
  Node* mm = p.mm;
  std::vector<Value*> ins = {mm->inputs[0], g.add_constant(base + ".weight", std::move(w))};
  if (p.c) ins.push_back(g.add_constant(base + ".bias", std::move(c)));
  Node* part = g.insert_node_before(at, mm->op, base, ins, {base + ".y"}, mm->opset);
  part->attrs = mm->attrs;
  Shape ys = mm->outputs[0]->type.shape;
  ys.back() = n;
  part->outputs[0]->type = TensorType{mm->outputs[0]->type.dtype, ys};
  return insert_reshape(g, at, base + ".reshape", part->outputs[0], shape, base, base + ".r");
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
  Product prod;
  if (use_count(g, y) != 1 || !product_of(y, &prod)) return false;
  // Every output must be wanted (a dropped part needs no GEMM, but keep the rewrite simple).
  for (const Value* p : split->outputs)
    if (!p) return false;
  std::vector<Tensor> ws, cs;
  int64_t c0 = 0;
  for (const Value* p : split->outputs) {
    const int64_t n = p->type.shape.back();
    Tensor w, c;
    if (!part_operands(prod, c0, n, &w, &c)) return false;
    ws.push_back(std::move(w));
    cs.push_back(std::move(c));
    c0 += n;
  }
  if (c0 != prod.N) return false;
  for (size_t i = 0; i < split->outputs.size(); ++i) {
    Value* p = split->outputs[i];
    const std::string base = split->name + ".part" + std::to_string(i);
    g.replace_all_uses(p, insert_part(g, split, prod, base, std::move(ws[i]), std::move(cs[i]), p->type.shape.back(),
                                      p->type.shape));
  }
  return true;
}

// The other form of a fused projection (PyTorch's nn.MultiheadAttention: torchvision's ViT and
// Swin):
//   y = Gemm or MatMul(a, W)                  [rows..., N]
//   v = Reshape(y, D)                         D: the rows regrouped, then S parts, then the part's
//                                             columns regrouped (N = S x E)
//       then Transposes, and Reshape / Unsqueeze / Squeeze steps that only add or drop axes of
//       size 1, each used only on this path
//   p_i = Gather(v, i, axis of S)             every reader of v selects one part
// -> p_i = Reshape(Transpose(Reshape(Gemm(a, W[:, i E .. (i + 1) E]), D without S), the order p_i
//    has D's other axes in), shape of p_i); the Transpose is left out when the order is D's.
// The Transpose and Reshapes then fuse into the part GEMM's epilogue (its stores permuted).

bool select_parts(Graph& g, Value* v) {
  // Every reader selects one part along the same axis, with a scalar constant index.
  const std::vector<Node*> readers = g.users(v);
  if (readers.empty() || g.is_graph_output(v)) return false;
  const int64_t vr = v->type.rank();
  int64_t axis = -1;
  for (const Node* r : readers) {
    if (r->op != OpKind::kGather || r->inputs[0] != v || !r->inputs[1]->is_constant() || r->inputs[1]->type.rank() != 0)
      return false;
    int64_t a = 0;
    if (const AttrValue* at = r->attr("axis")) a = std::get<int64_t>(*at);
    if (a < 0) a += vr;
    if (axis >= 0 && a != axis) return false;
    axis = a;
  }
  // Back to the product through view steps, each used only on this path.
  std::vector<Node*> path;
  Value* y = v;
  for (;;) {
    Node* n = y->producer;
    if (!n || !(n->op == OpKind::kReshape || n->op == OpKind::kUnsqueeze || n->op == OpKind::kSqueeze ||
                n->op == OpKind::kTranspose))
      break;
    if (y != v && (use_count(g, y) != 1 || g.is_graph_output(y))) return false;
    path.insert(path.begin(), n);
    y = n->inputs[0];
  }
  Product prod;
  if (path.empty() || use_count(g, y) != 1 || g.is_graph_output(y) || !product_of(y, &prod)) return false;
  const int64_t rows = y->type.numel() / prod.N;
  // Follow D's axes forward: ids[d] is the axis of D that dimension d of the current view is
  // (-1: a dimension of size 1). Before D, only steps that add or drop axes of size 1.
  Shape D;
  int64_t part_axis = -1, parts = 0;
  std::vector<int64_t> ids;
  for (const Node* n : path) {
    const Shape& in = n->inputs[0]->type.shape;
    const Shape& out = n->outputs[0]->type.shape;
    const bool units_only = n->op != OpKind::kTranspose && unit_reshape(in, out);
    if (D.empty()) {
      if (units_only) continue;
      if (n->op != OpKind::kReshape) return false;
      // The split view: a prefix of D holds the rows, the next axis (longer than 1) the parts.
      int64_t prefix = 1;
      size_t k = 0;
      while (k < out.size() && (prefix != rows || out[k] == 1)) prefix *= out[k++];
      if (k == out.size() || prefix != rows || prod.N % out[k] != 0) return false;
      int64_t cols = 1;
      for (size_t d = k + 1; d < out.size(); ++d) cols *= out[d];
      if (cols * out[k] != prod.N) return false;
      D = out, part_axis = static_cast<int64_t>(k), parts = out[k];
      for (size_t d = 0; d < out.size(); ++d) ids.push_back(out[d] == 1 ? -1 : static_cast<int64_t>(d));
      continue;
    }
    if (n->op == OpKind::kTranspose) {
      const AttrValue* pa = n->attr("perm");
      if (!pa) return false;  // (the default, reversed axes: not a form this meets)
      std::vector<int64_t> next;
      for (int64_t p : std::get<std::vector<int64_t>>(*pa)) next.push_back(ids[p]);
      ids = std::move(next);
    } else {
      if (!units_only) return false;
      ids = through_unit_reshape<int64_t>(in, ids, out, -1);
    }
  }
  if (D.empty() || ids[axis] != part_axis) return false;
  const int64_t E = prod.N / parts;
  // D's other long axes, in D's order (the part GEMM's output viewed), and the order p_i has them in.
  Shape base;
  std::vector<int64_t> base_ids, perm;
  for (int64_t d = 0; d < static_cast<int64_t>(D.size()); ++d)
    if (D[d] != 1 && d != part_axis) base.push_back(D[d]), base_ids.push_back(d);
  for (int64_t d = 0; d < static_cast<int64_t>(ids.size()); ++d)
    if (d != axis && ids[d] >= 0)
      perm.push_back(std::find(base_ids.begin(), base_ids.end(), ids[d]) - base_ids.begin());
  const bool identity = std::is_sorted(perm.begin(), perm.end());  // perm is a permutation
  std::vector<Tensor> ws(readers.size()), cs(readers.size());
  for (size_t i = 0; i < readers.size(); ++i) {
    int64_t part = readers[i]->inputs[1]->constant->as_int(0);
    if (part < 0) part += parts;
    if (part < 0 || part >= parts || !part_operands(prod, part * E, E, &ws[i], &cs[i])) return false;
  }
  for (size_t i = 0; i < readers.size(); ++i) {
    Node* r = readers[i];
    const Value* out = r->outputs[0];
    const std::string base_name = r->name + ".part";
    if (identity) {
      g.replace_all_uses(r->outputs[0], insert_part(g, r, prod, base_name, std::move(ws[i]), std::move(cs[i]), E,
                                                    out->type.shape));
      continue;
    }
    Value* viewed = insert_part(g, r, prod, base_name, std::move(ws[i]), std::move(cs[i]), E, base);
    Shape permuted;
    for (int64_t p : perm) permuted.push_back(base[p]);
    Node* t = g.insert_node_before(r, OpKind::kTranspose, base_name + ".order", {viewed}, {base_name + ".order.y"}, r->opset);
    t->attrs["perm"] = perm;
    t->outputs[0]->type = TensorType{out->type.dtype, permuted};
    g.replace_all_uses(r->outputs[0], insert_reshape(g, r, base_name + ".out", t->outputs[0], out->type.shape,
                                                     base_name + ".out", base_name + ".out.y"));
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
  std::vector<Value*> selected;  // the values Gathers select parts of
  for (const auto& n : g.nodes())
    if (n->op == OpKind::kGather && std::find(selected.begin(), selected.end(), n->inputs[0]) == selected.end())
      selected.push_back(n->inputs[0]);
  for (Value* v : selected) changed |= select_parts(g, v);
  if (changed) g.remove_dead_code();
  return changed;
}

}  // namespace mono
