// Ceil: y = the smallest integer not below x (float types).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_ceil(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::ceil(x); });
}

const OpDef& op_def_Ceil() {
  static const OpDef def{"Ceil", 1, 1, 1, 1, {}, infer_unary_float, compute_ceil};
  return def;
}

}  // namespace mono
