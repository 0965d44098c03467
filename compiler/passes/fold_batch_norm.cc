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

namespace {

bool all_constant(const Node& n, int from) {
  for (int i = from; i < n.num_inputs(); ++i)
    if (!n.inputs[i] || !n.inputs[i]->is_constant()) return false;
  return true;
}

// The per-channel map an inference BatchNormalization of C channels computes, y = x * s + t, if
// its statistics are constants of C elements.
bool affine_of(const Node& bn, int64_t C, std::vector<double>* s, std::vector<double>* t) {
  if (bn.outputs.size() != 1 || !bn.outputs[0] || !all_constant(bn, 1)) return false;
  const Tensor& gamma = *bn.inputs[1]->constant;
  const Tensor& beta = *bn.inputs[2]->constant;
  const Tensor& mean = *bn.inputs[3]->constant;
  const Tensor& var = *bn.inputs[4]->constant;
  if (gamma.numel() != C || beta.numel() != C || mean.numel() != C || var.numel() != C) return false;
  const double eps = node_attrs(bn).attr_float("epsilon");
  s->resize(C);
  t->resize(C);
  for (int64_t c = 0; c < C; ++c) {
    (*s)[c] = gamma.as_double(c) / std::sqrt(var.as_double(c) + eps);
    (*t)[c] = beta.as_double(c) - mean.as_double(c) * (*s)[c];
  }
  return true;
}

}  // namespace

bool fold_batch_norm(Graph& g) {
  bool changed = false;
  std::vector<double> s, t;
  for (const auto& bn : g.nodes()) {
    if (bn->op != OpKind::kBatchNormalization) continue;
    Node* conv = produced_by(bn->inputs[0], OpKind::kConv);
    if (!conv || channels_last_layout(*conv) || use_count(g, bn->inputs[0]) != 1) continue;
    Value* w = conv->input(1);
    Value* b = conv->input(2);
    if (!w->is_constant() || (b && !b->is_constant())) continue;
    const Tensor& W = *w->constant;
    const int64_t out_ch = W.shape()[0];
    const int64_t per_ch = out_ch ? W.numel() / out_ch : 0;
    if (!affine_of(*bn, out_ch, &s, &t)) continue;
    const Tensor& beta = *bn->inputs[2]->constant;
    const Tensor& mean = *bn->inputs[3]->constant;
    std::vector<float> w_new(W.numel()), b_new(out_ch);
    for (int64_t o = 0; o < out_ch; ++o) {
      for (int64_t k = 0; k < per_ch; ++k) w_new[o * per_ch + k] = static_cast<float>(W.as_double(o * per_ch + k) * s[o]);
      const double bias = b ? b->constant->as_double(o) : 0.0;
      b_new[o] = static_cast<float>((bias - mean.as_double(o)) * s[o] + beta.as_double(o));  // as t, with the bias inside
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
    if (bn->outputs.empty() || !bn->outputs[0] || use_count(g, bn->outputs[0]) == 0) continue;  // folded above
    Value* x = bn->inputs[0];
    const Shape& xs = x->type.shape;
    // fp32 only: in an fp16 graph the shift would be rounded (or overflow) in fp16, where the
    // reference computes BatchNormalization's arithmetic in float.
    if (xs.size() < 2 || x->type.dtype != DType::kF32 || !affine_of(*bn, xs[1], &s, &t)) continue;
    Shape cs(xs.size() - 1, 1);  // [C, 1, ...]: broadcasts along axis 1 of x
    cs[0] = xs[1];
    const std::vector<float> scale(s.begin(), s.end()), shift(t.begin(), t.end());
    const int opset = std::max(bn->opset, 7);  // Mul and Add broadcast from opset 7
    Node* mul = g.insert_node_before(bn, OpKind::kMul, bn->name + ".scale",
                                     {x, g.add_constant(bn->name + ".bn_scale", Tensor::from_floats(cs, scale, DType::kF32))},
                                     {bn->outputs[0]->name + ".scaled"}, opset);
    mul->outputs[0]->type = x->type;
    Node* add = g.insert_node_before(bn, OpKind::kAdd, bn->name + ".shift",
                                     {mul->outputs[0], g.add_constant(bn->name + ".bn_shift", Tensor::from_floats(cs, shift, DType::kF32))},
                                     {bn->outputs[0]->name + ".affine"}, opset);
    add->outputs[0]->type = bn->outputs[0]->type;
    forward_output(g, bn, 0, add->outputs[0]);
    changed = true;
  }
  if (changed) g.remove_dead_code();
  return changed;
}

}  // namespace mono
