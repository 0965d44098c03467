// Cos: y = cos(x) (float types).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_cos(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::cos(x); });
}

const OpDef& op_def_Cos() {
  static const OpDef def{"Cos", 1, 1, 1, 1, {}, infer_unary_float, compute_cos};
  return def;
}

}  // namespace mono
