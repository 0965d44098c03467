// ThresholdedRelu: y = x for x > alpha, else 0 (float types); alpha 1 by default.
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_thresholded_relu(ComputeContext& ctx) {
  const float alpha = ctx.attr_float("alpha");
  unary_float(ctx, [=](float x) { return x > alpha ? x : 0.0f; });
}

const OpDef& op_def_ThresholdedRelu() {
  static const OpDef def{"ThresholdedRelu", 1, 1, 1, 1, {attr("alpha", 1.0f)}, infer_unary_float,
                         compute_thresholded_relu};
  return def;
}

}  // namespace mono
