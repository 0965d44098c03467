// Relu: y = max(x, 0).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_relu(ComputeContext& ctx) {
  unary_numeric(ctx, [](auto x) { return x > 0 ? x : decltype(x){0}; });
}

const OpDef& op_def_Relu() {
  static const OpDef def{"Relu", 1, 1, 1, 1, {}, infer_unary_any, compute_relu};
  return def;
}

}  // namespace mono
