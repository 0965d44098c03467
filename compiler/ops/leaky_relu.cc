// LeakyRelu: y = x for x >= 0, alpha * x below (float types); alpha 0.01 by default.
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_leaky_relu(ComputeContext& ctx) {
  const float alpha = ctx.attr_float("alpha");
  unary_float(ctx, [=](float x) { return x < 0.0f ? alpha * x : x; });
}

const OpDef& op_def_LeakyRelu() {
  static const OpDef def{"LeakyRelu", 1, 1, 1, 1, {attr("alpha", 0.01f)}, infer_unary_float, compute_leaky_relu};
  return def;
}

}  // namespace mono
