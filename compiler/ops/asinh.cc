// Asinh: y = asinh(x) (float types).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_asinh(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::asinh(x); });
}

const OpDef& op_def_Asinh() {
  static const OpDef def{"Asinh", 1, 1, 1, 1, {}, infer_unary_float, compute_asinh};
  return def;
}

}  // namespace mono
