// Mish: y = x * tanh(softplus(x)) (float types; opset 18).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_mish(ComputeContext& ctx) {
  unary_float(ctx, [](float x) {
    const float softplus = std::fmax(x, 0.0f) + std::log1p(std::exp(-std::fabs(x)));
    return x * std::tanh(softplus);
  });
}

const OpDef& op_def_Mish() {
  static const OpDef def{"Mish", 1, 1, 1, 1, {}, infer_unary_float, compute_mish};
  return def;
}

}  // namespace mono
