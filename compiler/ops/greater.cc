// Greater: y = a > b with numpy broadcasting; inputs share a numeric dtype, the output is bool.
// Any comparison with NaN is false.
#include "compiler/ops/elementwise.h"

namespace mono {

static void infer_greater(InferContext& ctx) {
  expect_numeric(ctx, 0);
  infer_compare(ctx);
}

static void compute_greater(ComputeContext& ctx) {
  binary_predicate(ctx, [](auto a, auto b) { return a > b; });
}

const OpDef& op_def_Greater() {
  static const OpDef def{"Greater", 2, 2, 1, 1, {}, infer_greater, compute_greater};
  return def;
}

}  // namespace mono
