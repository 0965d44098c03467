// Neg: y = -x for float and integer tensors (the most negative integer stays itself).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_neg(ComputeContext& ctx) {
  unary_numeric(ctx, [](auto x) {
    if constexpr (std::is_integral_v<decltype(x)>) return wrap_neg(x);
    else return -x;
  });
}

const OpDef& op_def_Neg() {
  static const OpDef def{"Neg", 1, 1, 1, 1, {}, infer_unary_any, compute_neg};
  return def;
}

}  // namespace mono
