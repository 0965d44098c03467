// Abs: y = |x| for float and integer tensors (the most negative integer stays itself).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_abs(ComputeContext& ctx) {
  unary_numeric(ctx, [](auto x) {
    if constexpr (std::is_integral_v<decltype(x)>) return x < 0 ? wrap_neg(x) : x;
    else return std::fabs(x);
  });
}

const OpDef& op_def_Abs() {
  static const OpDef def{"Abs", 1, 1, 1, 1, {}, infer_unary_any, compute_abs};
  return def;
}

}  // namespace mono
