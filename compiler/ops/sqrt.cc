// Sqrt: square root (float types); sqrt(x < 0) = NaN.
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_sqrt(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::sqrt(x); });
}

const OpDef& op_def_Sqrt() {
  static const OpDef def{"Sqrt", 1, 1, 1, 1, {}, infer_unary_float, compute_sqrt};
  return def;
}

}  // namespace mono
