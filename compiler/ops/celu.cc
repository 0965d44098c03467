// Celu: y = max(0, x) + min(0, alpha * (e^(x / alpha) - 1)) (float types); alpha 1 by default.
#include "compiler/ops/elementwise.h"

namespace mono {

static void infer_celu(InferContext& ctx) {
  if (ctx.attr_float("alpha") == 0.0f) ctx.fail("alpha must not be 0");
  infer_unary_float(ctx);
}

static void compute_celu(ComputeContext& ctx) {
  const float alpha = ctx.attr_float("alpha");
  unary_float(ctx, [=](float x) { return std::fmax(0.0f, x) + std::fmin(0.0f, alpha * std::expm1(x / alpha)); });
}

const OpDef& op_def_Celu() {
  static const OpDef def{"Celu", 1, 1, 1, 1, {attr("alpha", 1.0f)}, infer_celu, compute_celu};
  return def;
}

}  // namespace mono
