// Sinh: y = sinh(x) (float types).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_sinh(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::sinh(x); });
}

const OpDef& op_def_Sinh() {
  static const OpDef def{"Sinh", 1, 1, 1, 1, {}, infer_unary_float, compute_sinh};
  return def;
}

}  // namespace mono
