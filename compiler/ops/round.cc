// Round: y = x rounded to the nearest integer, halves to even (numpy's round) (float types).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_round(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return std::nearbyint(x); });
}

const OpDef& op_def_Round() {
  static const OpDef def{"Round", 1, 1, 1, 1, {}, infer_unary_float, compute_round};
  return def;
}

}  // namespace mono
