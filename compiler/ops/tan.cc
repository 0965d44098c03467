// Tan: y = tan(x) (float types).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_tan(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::tan(x); });
}

const OpDef& op_def_Tan() {
  static const OpDef def{"Tan", 1, 1, 1, 1, {}, infer_unary_float, compute_tan};
  return def;
}

}  // namespace mono
