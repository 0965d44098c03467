// Softplus: y = ln(1 + e^x) (float types), in a form that neither overflows for large x nor
// loses the small result for very negative x.
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_softplus(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::fmax(x, 0.0f) + std::log1p(std::exp(-std::fabs(x))); });
}

const OpDef& op_def_Softplus() {
  static const OpDef def{"Softplus", 1, 1, 1, 1, {}, infer_unary_float, compute_softplus};
  return def;
}

}  // namespace mono
