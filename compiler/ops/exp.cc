// Exp: y = e^x (float types).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_exp(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::exp(x); });
}

const OpDef& op_def_Exp() {
  static const OpDef def{"Exp", 1, 1, 1, 1, {}, infer_unary_float, compute_exp};
  return def;
}

}  // namespace mono
