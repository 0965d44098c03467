// Max: elementwise maximum of one or more inputs of one numeric dtype, with numpy
// broadcasting across all of them. NaN propagates (numpy's maximum).
#include "compiler/ops/elementwise.h"

namespace mono {

static void infer_max(InferContext& ctx) {
  expect_numeric(ctx, 0);
  infer_broadcast(ctx);
}

static void compute_max(ComputeContext& ctx) {
  fold_inputs(ctx, [](auto a, auto b) { return (a > b || is_nan_value(a)) ? a : b; });
}

const OpDef& op_def_Max() {
  static const OpDef def{"Max", 1, -1, 1, 1, {}, infer_max, compute_max};
  return def;
}

}  // namespace mono
