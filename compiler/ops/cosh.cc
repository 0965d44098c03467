// Cosh: y = cosh(x) (float types).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_cosh(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::cosh(x); });
}

const OpDef& op_def_Cosh() {
  static const OpDef def{"Cosh", 1, 1, 1, 1, {}, infer_unary_float, compute_cosh};
  return def;
}

}  // namespace mono
