// Ops without code generation of their own, rewritten into ops that have it (each op's
// reference stays the oracle: the golden cases check the rewrite computes the same):
//   LogSoftmax(x)            -> d = x - ReduceMax(x); d - ReduceLogSumExp(d)   (the softmax axes)
//   GlobalMaxPool(x)         -> ReduceMax(x, spatial axes, keepdims)
//   InstanceNormalization    -> d = x - mean; d / sqrt(mean(d * d) + eps) * scale + B
//                               (means over the spatial axes, scale and B per channel)
//   DepthToSpace, SpaceToDepth -> Reshape, Transpose, Reshape (depth_space.h)
//   Resize                   -> per resized axis d: sum over taps t of
//                               Gather(x, index_t, axis d) * weight_t (+ the extrapolation value
//                               where tf_crop_and_resize falls outside), from resize.h's tables
#include "compiler/ops/depth_space.h"
#include "compiler/ops/resize.h"
#include "compiler/ops/op.h"
#include "compiler/ops/softmax.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace mono {
namespace {

// Adds nodes before `at`, named after it, at its opset.
class Builder {
 public:
  Builder(Graph& g, Node* at) : g_(g), at_(at), base_(at->outputs[0]->name) {}

  Value* node(OpKind op, std::vector<Value*> inputs, TensorType type, const char* suffix,
              std::map<std::string, AttrValue> attrs = {}) {
    Node* n = g_.insert_node_before(at_, op, at_->name + "." + suffix, std::move(inputs), {base_ + "." + suffix},
                                    at_->opset);
    n->attrs = std::move(attrs);
    n->outputs[0]->type = std::move(type);
    return n->outputs[0];
  }
  Value* ints(const std::vector<int64_t>& v, const char* suffix) {
    return g_.add_constant(base_ + "." + suffix, Tensor::from_ints({static_cast<int64_t>(v.size())}, v));
  }
  // A Reduce op over `axes`, keeping them: axes an input from opset 18, an attribute before
  // (ReduceSum, whose axes became an input at 13, is not used here).
  Value* reduce(OpKind op, Value* x, const std::vector<int64_t>& axes, const char* suffix) {
    Shape s = x->type.shape;
    for (int64_t a : axes) s[a] = 1;
    const TensorType t{x->type.dtype, s};
    if (at_->opset >= 18) return node(op, {x, ints(axes, (std::string(suffix) + ".axes").c_str())}, t, suffix);
    return node(op, {x}, t, suffix, {{"axes", axes}});
  }
  Value* reshape(Value* x, const Shape& s, const char* suffix) {
    return node(OpKind::kReshape, {x, ints(s, (std::string(suffix) + ".shape").c_str())}, {x->type.dtype, s}, suffix);
  }
  // A per-channel vector [C] as [C, 1, ...] for an input of `rank` (a constant stays one).
  Value* per_channel(Value* v, int64_t rank, const char* suffix) {
    Shape s(rank - 1, 1);
    s[0] = v->type.shape[0];
    if (v->is_constant()) return g_.add_constant(v->name + "." + suffix, v->constant->reshaped(s));
    return reshape(v, s, suffix);
  }
  void replace_output(Value* v) { g_.replace_all_uses(at_->outputs[0], v); }

 private:
  Graph& g_;
  Node* at_;
  std::string base_;
};

std::vector<int64_t> axes_from(int64_t first, int64_t rank) {
  std::vector<int64_t> a;
  for (int64_t d = first; d < rank; ++d) a.push_back(d);
  return a;
}

bool log_softmax(Graph& g, Node* n) {
  Value* x = n->inputs[0];
  const int64_t rank = x->type.rank();
  int64_t axis = softmax_axis(*n);  // checks the axis; before opset 13, the first coerced axis
  std::vector<int64_t> axes = n->opset < 13 ? axes_from(axis, rank) : std::vector<int64_t>{axis};
  if (axes.empty()) return false;
  Builder b(g, n);
  Value* m = b.reduce(OpKind::kReduceMax, x, axes, "max");
  Value* d = b.node(OpKind::kSub, {x, m}, x->type, "shifted");
  Value* l = b.reduce(OpKind::kReduceLogSumExp, d, axes, "log_sum_exp");
  b.replace_output(b.node(OpKind::kSub, {d, l}, x->type, "log_softmax"));
  return true;
}

bool global_max_pool(Graph& g, Node* n) {
  Builder b(g, n);
  b.replace_output(b.reduce(OpKind::kReduceMax, n->inputs[0], axes_from(2, n->inputs[0]->type.rank()), "max"));
  return true;
}

bool instance_normalization(Graph& g, Node* n) {
  Value* x = n->inputs[0];
  const int64_t rank = x->type.rank();
  const std::vector<int64_t> spatial = axes_from(2, rank);
  Builder b(g, n);
  Value* mean = b.reduce(OpKind::kReduceMean, x, spatial, "mean");
  Value* d = b.node(OpKind::kSub, {x, mean}, x->type, "centered");
  Value* var = b.reduce(OpKind::kReduceMean, b.node(OpKind::kMul, {d, d}, x->type, "squared"), spatial, "var");
  Value* eps = g.add_constant(n->outputs[0]->name + ".epsilon",
                              Tensor::scalar_float(node_attrs(*n).attr_float("epsilon"), x->type.dtype));
  Value* sd = b.node(OpKind::kSqrt, {b.node(OpKind::kAdd, {var, eps}, var->type, "var_eps")}, var->type, "std");
  Value* y = b.node(OpKind::kDiv, {d, sd}, x->type, "normalized");
  y = b.node(OpKind::kMul, {y, b.per_channel(n->inputs[1], rank, "per_channel")}, x->type, "scaled");
  b.replace_output(b.node(OpKind::kAdd, {y, b.per_channel(n->inputs[2], rank, "per_channel")}, x->type, "shifted"));
  return true;
}

bool depth_space(Graph& g, Node* n) {
  Value* x = n->inputs[0];
  const DepthSpaceSteps s = depth_space_steps(node_attrs(*n), n->op == OpKind::kDepthToSpace, x->type.shape);
  Shape t(6);
  for (int d = 0; d < 6; ++d) t[d] = s.split[s.perm[d]];
  Builder b(g, n);
  Value* v = b.reshape(x, s.split, "blocks");
  v = b.node(OpKind::kTranspose, {v}, {x->type.dtype, t}, "moved", {{"perm", s.perm}});
  b.replace_output(b.reshape(v, s.out, "merged"));
  return true;
}

// One Gather per tap from the axis table, weighted and summed; an axis at a time (separable, as
// ONNX's reference computes it). Taps that weigh nothing anywhere are left out.
bool resize(Graph& g, Node* n) {
  Value* x = n->inputs[0];
  const Tensor* known[4] = {nullptr, nullptr, nullptr, nullptr};
  for (int i = 1; i < 4; ++i)
    if (n->input(i) && n->input(i)->is_constant()) known[i] = n->input(i)->constant.get();
  const ResizeSpec spec = resize_spec(node_attrs(*n), x->type.shape, known[1], known[2], known[3]);
  const DType dt = x->type.dtype;
  const int64_t rank = x->type.rank();
  Builder b(g, n);
  Value* v = x;
  Shape shape = x->type.shape;
  for (int64_t d = 0; d < rank; ++d) {
    const ResizeAxis& ax = spec.axes[d];
    if (ax.identity()) continue;
    shape[d] = ax.out;
    const TensorType t{dt, shape};
    Shape column(rank - d, 1);  // [out, 1, ...]: broadcast along the axes after d
    column[0] = ax.out;
    const std::string axis = str_cat("resize", d);
    Value* sum = nullptr;
    for (int tap = 0; tap < ax.taps; ++tap) {
      std::vector<int64_t> index;
      std::vector<float> weight;
      bool used = false, unit = true;
      for (int64_t o = 0; o < ax.out; ++o) {
        index.push_back(ax.index[o * ax.taps + tap]);
        weight.push_back(static_cast<float>(ax.weight[o * ax.taps + tap]));
        used |= weight.back() != 0;
        unit &= weight.back() == 1;
      }
      if (!used) continue;
      const std::string tag = str_cat(axis, ".tap", tap);
      Value* gathered = b.node(OpKind::kGather, {v, b.ints(index, (tag + ".index").c_str())}, t, tag.c_str(),
                               {{"axis", d}});
      if (!unit)
        gathered = b.node(OpKind::kMul, {gathered, g.add_constant(gathered->name + ".weight", Tensor::from_floats(column, weight, dt))},
                          t, (tag + ".weighted").c_str());
      sum = sum ? b.node(OpKind::kAdd, {sum, gathered}, t, (tag + ".sum").c_str()) : gathered;
    }
    bool outside = false;
    std::vector<float> fill;
    for (int64_t o = 0; o < ax.out; ++o) {
      outside |= ax.outside[o];
      fill.push_back(ax.outside[o] ? static_cast<float>(spec.extrapolation) : 0.0f);
    }
    if (outside || !sum) {
      Value* e = g.add_constant(str_cat(n->outputs[0]->name, ".", axis, ".extrapolation"), Tensor::from_floats(column, fill, dt));
      sum = sum ? b.node(OpKind::kAdd, {sum, e}, t, (axis + ".extrapolated").c_str())
                : b.node(OpKind::kExpand, {e, b.ints(shape, (axis + ".shape").c_str())}, t, (axis + ".extrapolated").c_str());
    }
    v = sum;
  }
  if (v == x) v = b.node(OpKind::kIdentity, {x}, x->type, "resized");
  b.replace_output(v);
  return true;
}

}  // namespace

bool decompose(Graph& g) {
  bool changed = false;
  std::vector<Node*> nodes;
  for (const auto& n : g.nodes()) nodes.push_back(n.get());
  for (Node* n : nodes) {
    if (!n->outputs[0]) continue;
    switch (n->op) {
      case OpKind::kLogSoftmax: changed |= log_softmax(g, n); break;
      case OpKind::kGlobalMaxPool: changed |= global_max_pool(g, n); break;
      case OpKind::kInstanceNormalization: changed |= instance_normalization(g, n); break;
      case OpKind::kDepthToSpace: case OpKind::kSpaceToDepth: changed |= depth_space(g, n); break;
      case OpKind::kResize: changed |= resize(g, n); break;
      default: break;
    }
  }
  if (changed) g.remove_dead_code();
  return changed;
}

}  // namespace mono
