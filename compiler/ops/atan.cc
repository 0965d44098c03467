// Atan: y = atan(x) (float types).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_atan(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::atan(x); });
}

const OpDef& op_def_Atan() {
  static const OpDef def{"Atan", 1, 1, 1, 1, {}, infer_unary_float, compute_atan};
  return def;
}

}  // namespace mono
