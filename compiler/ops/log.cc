// Log: natural logarithm (float types); log(0) = -inf, log(x < 0) = NaN.
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_log(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::log(x); });
}

const OpDef& op_def_Log() {
  static const OpDef def{"Log", 1, 1, 1, 1, {}, infer_unary_float, compute_log};
  return def;
}

}  // namespace mono
