// LayerNorm spelled out by older exporters:
//   m = ReduceMean(x, axes); d = x - m; v = ReduceMean(d^2, axes)   (d^2 as Pow(d,2) or d*d)
//   y = d / Sqrt(v + eps) [* gamma] [+ beta]
// with `axes` the trailing axes of x, becomes LayerNormalization(x, gamma, beta){axis, epsilon}.
#include <algorithm>

#include "compiler/ops/op.h"
#include "compiler/ops/reduce.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace mono {
namespace {

// ReduceMean's axes (attribute before opset 18, constant input after), normalised; keepdims
// must be 1. Returns false if they cannot be read.
bool mean_axes(const Node& n, std::vector<int64_t>* axes) {
  const AttrReader attrs = node_attrs(n);
  if (attrs.attr_int("keepdims") != 1) return false;
  const Value* in1 = n.input(1);
  if (in1 ? !in1->is_constant() : !attrs.has_attr("axes")) return false;  // axes not given: not a LayerNorm
  const ReduceSpec spec = reduce_spec(attrs, n.inputs[0]->type.shape, in1 ? in1->constant.get() : nullptr);
  axes->clear();
  for (size_t a = 0; a < spec.reduced.size(); ++a)
    if (spec.reduced[a]) axes->push_back(static_cast<int64_t>(a));
  return !spec.noop && !axes->empty();
}

// The first axis if `axes` are exactly the trailing axes of a rank-`rank` tensor, else -1.
int64_t trailing_axis(const std::vector<int64_t>& axes, int64_t rank) {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != rank - static_cast<int64_t>(axes.size()) + static_cast<int64_t>(i)) return -1;
  return axes.front();
}

bool is_square_of(Value* p, Value* d) {
  if (Node* pow = produced_by(p, OpKind::kPow)) return pow->inputs[0] == d && is_constant_near(pow->inputs[1], 2.0, 0.0);
  if (Node* mul = produced_by(p, OpKind::kMul)) return mul->inputs[0] == d && mul->inputs[1] == d;
  return false;
}

// A constant usable as Scale/B of a LayerNormalization over `norm_shape` (reshaped if it
// only has extra leading 1s), or null.
Value* as_param(Graph& g, Value* c, const Shape& norm_shape, DType dt) {
  if (!c || !c->is_constant() || c->type.dtype != dt) return nullptr;
  if (c->type.shape == norm_shape) return c;
  if (c->constant->numel() != shape_numel(norm_shape)) return nullptr;
  return g.add_constant(c->name + ".reshaped", c->constant->reshaped(norm_shape));
}

}  // namespace

bool recognize_layer_norm(Graph& g) {
  bool changed = false;
  std::vector<Node*> divs;
  for (const auto& n : g.nodes())
    if (n->op == OpKind::kDiv) divs.push_back(n.get());
  for (Node* div : divs) {
    Node* sub = produced_by(div->inputs[0], OpKind::kSub);
    Node* sqrt = produced_by(div->inputs[1], OpKind::kSqrt);
    if (!sub || !sqrt) continue;
    Value* x = sub->inputs[0];
    Value* d = sub->outputs[0];
    Node* mean = produced_by(sub->inputs[1], OpKind::kReduceMean);
    Node* add = produced_by(sqrt->inputs[0], OpKind::kAdd);
    if (!mean || mean->inputs[0] != x || !add) continue;
    Value* var = nullptr;
    Value* eps = nullptr;
    for (int i = 0; i < 2; ++i) {
      if (add->inputs[1 - i]->is_constant() && add->inputs[1 - i]->constant->numel() == 1) {
        var = add->inputs[i];
        eps = add->inputs[1 - i];
      }
    }
    Node* var_mean = produced_by(var, OpKind::kReduceMean);
    if (!var_mean || !is_square_of(var_mean->inputs[0], d)) continue;
    std::vector<int64_t> axes1, axes2;
    if (!mean_axes(*mean, &axes1) || !mean_axes(*var_mean, &axes2) || axes1 != axes2) continue;
    const int64_t rank = x->type.rank();
    const int64_t axis = trailing_axis(axes1, rank);
    if (axis < 0 || !is_float(x->type.dtype)) continue;
    const Shape norm_shape(x->type.shape.begin() + axis, x->type.shape.end());
    const DType dt = x->type.dtype;

    // Optional affine tail: * gamma, + beta (each the only user of what it reads).
    Value* y = div->outputs[0];
    Node* last = div;
    Value* gamma = nullptr;
    Value* beta = nullptr;
    auto users = g.users(y);
    if (users.size() == 1 && users[0]->op == OpKind::kMul && !g.is_graph_output(y)) {
      Node* mul = users[0];
      Value* c = mul->inputs[0] == y ? mul->inputs[1] : mul->inputs[0];
      if ((gamma = as_param(g, c, norm_shape, dt)) && mul->outputs[0]->type == x->type) {
        last = mul;
        y = mul->outputs[0];
        auto users2 = g.users(y);
        if (users2.size() == 1 && users2[0]->op == OpKind::kAdd && !g.is_graph_output(y)) {
          Node* addb = users2[0];
          Value* cb = addb->inputs[0] == y ? addb->inputs[1] : addb->inputs[0];
          if ((beta = as_param(g, cb, norm_shape, dt)) && addb->outputs[0]->type == x->type) {
            last = addb;
            y = addb->outputs[0];
          } else {
            beta = nullptr;
          }
        }
      } else {
        gamma = nullptr;
      }
    }
    if (y->type != x->type) continue;
    if (!gamma) {
      Tensor ones = Tensor::from_floats(norm_shape, std::vector<float>(shape_numel(norm_shape), 1.0f), dt);
      gamma = g.add_constant(div->outputs[0]->name + ".scale", std::move(ones));
    }
    std::vector<Value*> inputs = {x, gamma};
    if (beta) inputs.push_back(beta);
    Node* ln = g.insert_node_before(last, OpKind::kLayerNormalization, y->name + ".layer_norm", inputs,
                                    {y->name + ".ln"}, last->opset);
    ln->attrs["axis"] = axis;
    ln->attrs["epsilon"] = static_cast<float>(eps->constant->as_double(0));
    ln->outputs[0]->type = y->type;
    g.replace_all_uses(y, ln->outputs[0]);
    changed = true;
  }
  if (changed) g.remove_dead_code();
  return changed;
}

}  // namespace mono
