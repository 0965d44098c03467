// Erf: the Gauss error function (float types).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_erf(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::erf(x); });
}

const OpDef& op_def_Erf() {
  static const OpDef def{"Erf", 1, 1, 1, 1, {}, infer_unary_float, compute_erf};
  return def;
}

}  // namespace mono
