// Reciprocal: y = 1 / x (float types); 1 / 0 = inf.
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_reciprocal(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return 1.0f / x; });
}

const OpDef& op_def_Reciprocal() {
  static const OpDef def{"Reciprocal", 1, 1, 1, 1, {}, infer_unary_float, compute_reciprocal};
  return def;
}

}  // namespace mono
