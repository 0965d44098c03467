// Div: y = a / b with numpy broadcasting (numeric types). Integer division truncates toward
// zero like C; dividing an integer by zero is an error.
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_div(ComputeContext& ctx) {
  binary_numeric(ctx, [&ctx](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>) {
      if (b == 0) ctx.fail("integer division by zero");
      return b == -1 ? wrap_neg(a) : a / b;  // INT64_MIN / -1 wraps instead of trapping
    } else {
      return a / b;
    }
  });
}

const OpDef& op_def_Div() {
  static const OpDef def{"Div", 2, 2, 1, 1, {}, infer_broadcast_numeric, compute_div};
  return def;
}

}  // namespace mono
