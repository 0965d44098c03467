// Softsign: y = x / (1 + abs(x)) (float types).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_softsign(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return x / (1.0f + std::fabs(x)); });
}

const OpDef& op_def_Softsign() {
  static const OpDef def{"Softsign", 1, 1, 1, 1, {}, infer_unary_float, compute_softsign};
  return def;
}

}  // namespace mono
