// Sign: y = -1, 0 or 1 by the sign of x (numeric types); NaN stays NaN.
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_sign(ComputeContext& ctx) {
  unary_numeric(ctx, [](auto x) {
    using C = decltype(x);
    return x > C{0} ? C{1} : (x < C{0} ? C{-1} : x);  // 0 and NaN are their own sign
  });
}

const OpDef& op_def_Sign() {
  static const OpDef def{"Sign", 1, 1, 1, 1, {}, infer_unary_any, compute_sign};
  return def;
}

}  // namespace mono
