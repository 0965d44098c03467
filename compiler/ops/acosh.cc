// Acosh: y = acosh(x), NaN below 1 (float types).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_acosh(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::acosh(x); });
}

const OpDef& op_def_Acosh() {
  static const OpDef def{"Acosh", 1, 1, 1, 1, {}, infer_unary_float, compute_acosh};
  return def;
}

}  // namespace mono
