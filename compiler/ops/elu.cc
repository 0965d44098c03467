// Elu: y = x for x >= 0, alpha * (e^x - 1) below (float types); alpha 1 by default.
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_elu(ComputeContext& ctx) {
  const float alpha = ctx.attr_float("alpha");
  unary_float(ctx, [=](float x) { return x < 0.0f ? alpha * std::expm1(x) : x; });
}

const OpDef& op_def_Elu() {
  static const OpDef def{"Elu", 1, 1, 1, 1, {attr("alpha", 1.0f)}, infer_unary_float, compute_elu};
  return def;
}

}  // namespace mono
