// Min: elementwise minimum of one or more inputs of one numeric dtype, with numpy
// broadcasting across all of them. NaN propagates (numpy's minimum).
#include "compiler/ops/elementwise.h"

namespace mono {

static void infer_min(InferContext& ctx) {
  expect_numeric(ctx, 0);
  infer_broadcast(ctx);
}

static void compute_min(ComputeContext& ctx) {
  fold_inputs(ctx, [](auto a, auto b) { return (a < b || is_nan_value(a)) ? a : b; });
}

const OpDef& op_def_Min() {
  static const OpDef def{"Min", 1, -1, 1, 1, {}, infer_min, compute_min};
  return def;
}

}  // namespace mono
