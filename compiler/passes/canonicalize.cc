// One spelling per operation, so that exporters' variants meet and code generation sees
// fewer op kinds:
//   Flatten(x)                                   -> Reshape(x, static shape)
//   ReduceMean(x, axes = all spatial axes of NCHW..) -> GlobalAveragePool(x) (+ Reshape if
//                                                   keepdims = 0)
//   MatMul(a, b) with a 1-D operand                -> Reshape to [1,K] / [K,1], MatMul, Reshape
//                                                   (ONNX's rule: the added dim is removed)
//   MatMul(a [.., M, K], b [K, N]) with batches      -> Reshape a to [rows, K], MatMul, Reshape
#include <algorithm>

#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace mono {
namespace {

// Every use of n's output `out` reads `from` reshaped to out's shape instead (node n.NAME_SUFFIX).
void reshape_into(Graph& g, Node* n, const std::string& name_suffix, Value* from, Value* out) {
  g.replace_all_uses(out, insert_reshape(g, n, n->name + name_suffix, from, out->type.shape, out->name, out->name + ".r"));
}

bool flatten_to_reshape(Graph& g, Node* n) {
  reshape_into(g, n, "", n->inputs[0], n->outputs[0]);
  return true;
}

bool mean_to_global_pool(Graph& g, Node* n) {
  Value* x = n->inputs[0];
  const int64_t rank = x->type.rank();
  if (rank < 3 || !is_float(x->type.dtype)) return false;
  std::vector<int64_t> axes;
  if (const AttrValue* a = n->attr("axes")) axes = std::get<std::vector<int64_t>>(*a);
  else if (n->input(1) && n->input(1)->is_constant()) axes = n->input(1)->constant->to_int_vector();
  else return false;
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) return false;
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  std::vector<int64_t> spatial;
  for (int64_t i = 2; i < rank; ++i) spatial.push_back(i);
  if (axes != spatial) return false;
  Value* out = n->outputs[0];
  Shape pooled = x->type.shape;
  for (int64_t i = 2; i < rank; ++i) pooled[i] = 1;
  Node* gap = g.insert_node_before(n, OpKind::kGlobalAveragePool, n->name, {x}, {out->name + ".gap"}, n->opset);
  gap->outputs[0]->type = TensorType{x->type.dtype, pooled};
  if (pooled != out->type.shape) reshape_into(g, n, ".squeeze", gap->outputs[0], out);  // keepdims = 0
  else g.replace_all_uses(out, gap->outputs[0]);
  return true;
}

bool matmul_vector_to_matrix(Graph& g, Node* n) {
  Value* a = n->inputs[0];
  Value* b = n->inputs[1];
  if (a->type.rank() != 1 && b->type.rank() != 1) return false;
  if (a->type.rank() == 0 || b->type.rank() == 0) return false;
  auto as_matrix = [&](Value* v, Shape s, const char* suffix) {
    return insert_reshape(g, n, n->name + suffix, v, s, v->name + suffix, v->name + suffix);
  };
  Value* a2 = a->type.rank() == 1 ? as_matrix(a, {1, a->type.shape[0]}, ".row") : a;
  Value* b2 = b->type.rank() == 1 ? as_matrix(b, {b->type.shape[0], 1}, ".col") : b;
  Value* out = n->outputs[0];
  Shape product = a2->type.shape;  // the 2-D (or batched) product's shape, broadcast batch dims
  {
    const Shape& as = a2->type.shape;
    const Shape& bs = b2->type.shape;
    const size_t rank = std::max(as.size(), bs.size());
    product.assign(rank, 1);
    for (size_t i = 0; i + 2 < rank; ++i) {
      const int64_t da = i + as.size() >= rank ? as[i + as.size() - rank] : 1;
      const int64_t db = i + bs.size() >= rank ? bs[i + bs.size() - rank] : 1;
      product[i] = std::max(da, db);
    }
    product[rank - 2] = as[as.size() - 2];
    product[rank - 1] = bs[bs.size() - 1];
  }
  Node* mm = g.insert_node_before(n, OpKind::kMatMul, n->name, {a2, b2}, {out->name + ".mm"}, n->opset);
  mm->outputs[0]->type = TensorType{out->type.dtype, product};
  reshape_into(g, n, ".squeeze", mm->outputs[0], out);
  return true;
}

// MatMul(a [.., M, K], b [K, N]) with batch dimensions on a only is one GEMM over all of a's
// rows: Reshape a to [rows, K], MatMul, Reshape back. The code generator runs a batched MatMul
// as a GEMM per batch entry, which for a sequence-first activation ([S, 1, E] x W, as
// torchvision's MultiheadAttention exports its projections) is S products of one row each:
// vit-b-16's Q/K/V projection took 240 us a layer on the H100.
bool matmul_batched_rows_to_matrix(Graph& g, Node* n) {
  Value* a = n->inputs[0];
  Value* b = n->inputs[1];
  const Shape& as = a->type.shape;
  if (as.size() < 3 || b->type.rank() != 2) return false;
  const int64_t k = as.back(), rows = shape_numel(as) / k;
  if (rows == as[as.size() - 2]) return false;  // a single batch entry: already one GEMM
  Value* a2 = insert_reshape(g, n, n->name + ".rows", a, {rows, k}, a->name + ".rows", a->name + ".rows");
  Value* out = n->outputs[0];
  Node* mm = g.insert_node_before(n, OpKind::kMatMul, n->name, {a2, b}, {out->name + ".mm"}, n->opset);
  mm->outputs[0]->type = TensorType{out->type.dtype, {rows, b->type.shape[1]}};
  reshape_into(g, n, ".batched", mm->outputs[0], out);
  return true;
}

}  // namespace

bool canonicalize(Graph& g) {
  bool changed = false;
  std::vector<Node*> nodes;
  for (const auto& n : g.nodes()) nodes.push_back(n.get());
  for (Node* n : nodes) {
    if (n->op == OpKind::kFlatten) changed |= flatten_to_reshape(g, n);
    else if (n->op == OpKind::kReduceMean) changed |= mean_to_global_pool(g, n);
    else if (n->op == OpKind::kMatMul)
      changed |= matmul_vector_to_matrix(g, n) || matmul_batched_rows_to_matrix(g, n);
  }
  if (changed) g.remove_dead_code();
  return changed;
}

}  // namespace mono
