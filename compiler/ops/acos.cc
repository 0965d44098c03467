// Acos: y = acos(x), NaN outside [-1, 1] (float types).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_acos(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::acos(x); });
}

const OpDef& op_def_Acos() {
  static const OpDef def{"Acos", 1, 1, 1, 1, {}, infer_unary_float, compute_acos};
  return def;
}

}  // namespace mono
