// Atanh: y = atanh(x), NaN outside [-1, 1] (float types).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_atanh(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::atanh(x); });
}

const OpDef& op_def_Atanh() {
  static const OpDef def{"Atanh", 1, 1, 1, 1, {}, infer_unary_float, compute_atanh};
  return def;
}

}  // namespace mono
