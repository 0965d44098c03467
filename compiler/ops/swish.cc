// Swish: y = x * sigmoid(alpha * x) (float types; opset 24; alpha 1 by default, SiLU). Also
// what recognize_swish makes of an exporter's Mul(x, Sigmoid(x)), so that the activation is
// one epilogue step instead of a stage of its own.
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_swish(ComputeContext& ctx) {
  const float alpha = ctx.attr_float("alpha");
  unary_float(ctx, [alpha](float x) {
    // Sigmoid as compute_sigmoid computes it (sigmoid.cc), then the product.
    const float z = alpha * x;
    const float e = std::exp(-std::fabs(z));
    const float r = 1.0f / (1.0f + e);
    return x * (z >= 0 ? r : e * r);
  });
}

const OpDef& op_def_Swish() {
  static const OpDef def{"Swish", 1, 1, 1, 1, {attr("alpha", 1.0f)}, infer_unary_float, compute_swish};
  return def;
}

}  // namespace mono
