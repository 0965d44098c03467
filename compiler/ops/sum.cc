// Sum: elementwise sum of one or more float inputs with numpy broadcasting across all of them,
// added left to right.
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_sum(ComputeContext& ctx) {
  fold_inputs(ctx, [](auto a, auto b) { return a + b; });
}

const OpDef& op_def_Sum() {
  static const OpDef def{"Sum", 1, -1, 1, 1, {}, infer_broadcast_float, compute_sum};
  return def;
}

}  // namespace mono
