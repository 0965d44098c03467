// Sin: y = sin(x) (float types).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_sin(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::sin(x); });
}

const OpDef& op_def_Sin() {
  static const OpDef def{"Sin", 1, 1, 1, 1, {}, infer_unary_float, compute_sin};
  return def;
}

}  // namespace mono
