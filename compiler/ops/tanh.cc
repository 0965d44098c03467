// Tanh: hyperbolic tangent (float types).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_tanh(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::tanh(x); });
}

const OpDef& op_def_Tanh() {
  static const OpDef def{"Tanh", 1, 1, 1, 1, {}, infer_unary_float, compute_tanh};
  return def;
}

}  // namespace mono
