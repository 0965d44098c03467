// Conv followed by an inference BatchNormalization is one Conv with scaled weights:
//   W'[o] = W[o] * s[o],  b'[o] = (b[o] - mean[o]) * s[o] + beta[o],  s = gamma / sqrt(var + eps)
// Any other inference BatchNormalization with constant statistics (a pre-activation network's,
// DenseNet's after each Concat) is the per-channel affine map it computes:
//   y = x * s + t,  t = beta - mean * s   (a Mul and an Add with [C, 1, ...] constants)
// which the elementwise machinery handles everywhere a BatchNormalization would need a case of
// its own (the channels_last pass converts it with its neighbours; a group takes it as steps).
#include <cmath>

#include "compiler/ops/op.h"
#include "compiler/ops/pool.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace mono {

static bool all_constant(const Node& n, int from) {
  for (int i = from; i < n.num_inputs(); ++i)
    if (!n.inputs[i] || !n.inputs[i]->is_constant()) return false;
  return true;
}

bool fold_batch_norm(Graph& g) {
  bool changed = false;
  for (const auto& bn : g.nodes()) {
    if (bn->op != OpKind::kBatchNormalization || bn->outputs.size() != 1 || !bn->outputs[0]) continue;
    Node* conv = produced_by(bn->inputs[0], OpKind::kConv);
    if (!conv || channels_last_layout(*conv) || !all_constant(*bn, 1) || use_count(g, bn->inputs[0]) != 1) continue;
    Value* w = conv->input(1);
    Value* b = conv->input(2);
    if (!w->is_constant() || (b && !b->is_constant())) continue;
    const Tensor& W = *w->constant;
    const int64_t out_ch = W.shape()[0];
    const int64_t per_ch = out_ch ? W.numel() / out_ch : 0;
    const Tensor& gamma = *bn->inputs[1]->constant;
    const Tensor& beta = *bn->inputs[2]->constant;
    const Tensor& mean = *bn->inputs[3]->constant;
    const Tensor& var = *bn->inputs[4]->constant;
    if (gamma.numel() != out_ch || beta.numel() != out_ch || mean.numel() != out_ch || var.numel() != out_ch) continue;
    const float eps = node_attrs(*bn).attr_float("epsilon");
    std::vector<float> w_new(W.numel()), b_new(out_ch);
    for (int64_t o = 0; o < out_ch; ++o) {
      double s = gamma.as_double(o) / std::sqrt(var.as_double(o) + eps);
      for (int64_t k = 0; k < per_ch; ++k) w_new[o * per_ch + k] = static_cast<float>(W.as_double(o * per_ch + k) * s);
      double bias = b ? b->constant->as_double(o) : 0.0;
      b_new[o] = static_cast<float>((bias - mean.as_double(o)) * s + beta.as_double(o));
    }
    const DType dt = W.dtype();
    Value* w2 = g.add_constant(w->name + ".bn_folded", Tensor::from_floats(W.shape(), w_new, dt));
    Value* b2 = g.add_constant((b ? b->name : conv->outputs[0]->name + ".bias") + ".bn_folded",
                               Tensor::from_floats({out_ch}, b_new, dt));
    conv->inputs.resize(3);
    conv->inputs[1] = w2;
    conv->inputs[2] = b2;
    forward_output(g, bn.get(), 0, conv->outputs[0]);
    changed = true;
  }
  for (Node* bn : nodes_of(g, OpKind::kBatchNormalization)) {
    if (bn->outputs.size() != 1 || !bn->outputs[0] || !all_constant(*bn, 1) || use_count(g, bn->outputs[0]) == 0) continue;
    Value* x = bn->inputs[0];
    const Shape& xs = x->type.shape;
    // fp32 only: in an fp16 graph the shift would be rounded (or overflow) in fp16, where the
    // reference computes BatchNormalization's arithmetic in float.
    if (xs.size() < 2 || x->type.dtype != DType::kF32) continue;
    const int64_t C = xs[1];
    const Tensor& gamma = *bn->inputs[1]->constant;
    const Tensor& beta = *bn->inputs[2]->constant;
    const Tensor& mean = *bn->inputs[3]->constant;
    const Tensor& var = *bn->inputs[4]->constant;
    if (gamma.numel() != C || beta.numel() != C || mean.numel() != C || var.numel() != C) continue;
    const double eps = node_attrs(*bn).attr_float("epsilon");
    std::vector<float> scale(C), shift(C);
    for (int64_t c = 0; c < C; ++c) {
      const double sc = gamma.as_double(c) / std::sqrt(var.as_double(c) + eps);
      scale[c] = static_cast<float>(sc);
      shift[c] = static_cast<float>(beta.as_double(c) - mean.as_double(c) * sc);
    }
    Shape cs(xs.size() - 1, 1);  // [C, 1, ...]: broadcasts along axis 1 of x
    cs[0] = C;
    const DType dt = x->type.dtype;
    const int opset = std::max(bn->opset, 7);  // Mul and Add broadcast from opset 7
    Node* mul = g.insert_node_before(bn, OpKind::kMul, bn->name + ".scale",
                                     {x, g.add_constant(bn->name + ".bn_scale", Tensor::from_floats(cs, scale, dt))},
                                     {bn->outputs[0]->name + ".scaled"}, opset);
    mul->outputs[0]->type = x->type;
    Node* add = g.insert_node_before(bn, OpKind::kAdd, bn->name + ".shift",
                                     {mul->outputs[0], g.add_constant(bn->name + ".bn_shift", Tensor::from_floats(cs, shift, dt))},
                                     {bn->outputs[0]->name + ".affine"}, opset);
    add->outputs[0]->type = bn->outputs[0]->type;
    forward_output(g, bn, 0, add->outputs[0]);
    changed = true;
  }
  if (changed) g.remove_dead_code();
  return changed;
}

}  // namespace mono
