// Floor: y = the largest integer not above x (float types).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_floor(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::floor(x); });
}

const OpDef& op_def_Floor() {
  static const OpDef def{"Floor", 1, 1, 1, 1, {}, infer_unary_float, compute_floor};
  return def;
}

}  // namespace mono
