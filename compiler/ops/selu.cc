// Selu: y = gamma * x for x > 0, gamma * alpha * (e^x - 1) otherwise (float types); the
// defaults are the self-normalising constants of Klambauer et al. as ONNX writes them.
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_selu(ComputeContext& ctx) {
  const float alpha = ctx.attr_float("alpha"), gamma = ctx.attr_float("gamma");
  unary_float(ctx, [=](float x) { return x > 0.0f ? gamma * x : gamma * alpha * std::expm1(x); });
}

const OpDef& op_def_Selu() {
  static const OpDef def{"Selu", 1, 1, 1, 1,
                         {attr("alpha", 1.67326319217681884765625f), attr("gamma", 1.05070102214813232421875f)},
                         infer_unary_float, compute_selu};
  return def;
}

}  // namespace mono
