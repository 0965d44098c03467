// Shrink: y = x + bias for x < -lambd, x - bias for x > lambd, else 0 (float types; bias 0
// and lambd 0.5 by default: the hard shrink).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_shrink(ComputeContext& ctx) {
  const float bias = ctx.attr_float("bias"), lambd = ctx.attr_float("lambd");
  unary_float(ctx, [=](float x) { return x < -lambd ? x + bias : (x > lambd ? x - bias : 0.0f); });
}

const OpDef& op_def_Shrink() {
  static const OpDef def{"Shrink", 1, 1, 1, 1, {attr("bias", 0.0f), attr("lambd", 0.5f)}, infer_unary_float,
                         compute_shrink};
  return def;
}

}  // namespace mono
