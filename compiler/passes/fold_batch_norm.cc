// Conv followed by an inference BatchNormalization is one Conv with scaled weights:
//   W'[o] = W[o] * s[o],  b'[o] = (b[o] - mean[o]) * s[o] + beta[o],  s = gamma / sqrt(var + eps)
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
  if (changed) g.remove_dead_code();
  return changed;
}

}  // namespace mono
