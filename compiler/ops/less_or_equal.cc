// LessOrEqual: y = a <= b with numpy broadcasting; inputs share a numeric dtype, the output is bool.
// Any comparison with NaN is false.
#include "compiler/ops/elementwise.h"

namespace mono {

static void infer_less_or_equal(InferContext& ctx) {
  expect_numeric(ctx, 0);
  infer_compare(ctx);
}

static void compute_less_or_equal(ComputeContext& ctx) {
  binary_predicate(ctx, [](auto a, auto b) { return a <= b; });
}

const OpDef& op_def_LessOrEqual() {
  static const OpDef def{"LessOrEqual", 2, 2, 1, 1, {}, infer_less_or_equal, compute_less_or_equal};
  return def;
}

}  // namespace mono
