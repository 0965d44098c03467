// Asin: y = asin(x), NaN outside [-1, 1] (float types).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_asin(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::asin(x); });
}

const OpDef& op_def_Asin() {
  static const OpDef def{"Asin", 1, 1, 1, 1, {}, infer_unary_float, compute_asin};
  return def;
}

}  // namespace mono
