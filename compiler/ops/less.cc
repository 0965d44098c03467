// Less: y = a < b with numpy broadcasting; inputs share a numeric dtype, the output is bool.
// Any comparison with NaN is false.
#include "compiler/ops/elementwise.h"

namespace mono {

static void infer_less(InferContext& ctx) {
  expect_numeric(ctx, 0);
  infer_compare(ctx);
}

static void compute_less(ComputeContext& ctx) {
  binary_predicate(ctx, [](auto a, auto b) { return a < b; });
}

const OpDef& op_def_Less() {
  static const OpDef def{"Less", 2, 2, 1, 1, {}, infer_less, compute_less};
  return def;
}

}  // namespace mono
