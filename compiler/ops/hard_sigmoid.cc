// HardSigmoid: y = max(0, min(1, alpha * x + beta)) (float types); alpha 0.2, beta 0.5 by
// default (torch's nn.Hardsigmoid exports alpha 1/6).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_hard_sigmoid(ComputeContext& ctx) {
  const float alpha = ctx.attr_float("alpha"), beta = ctx.attr_float("beta");
  unary_float(ctx, [=](float x) { return std::fmax(0.0f, std::fmin(1.0f, alpha * x + beta)); });
}

const OpDef& op_def_HardSigmoid() {
  static const OpDef def{"HardSigmoid", 1, 1, 1, 1, {attr("alpha", 0.2f), attr("beta", 0.5f)},
                         infer_unary_float, compute_hard_sigmoid};
  return def;
}

}  // namespace mono
