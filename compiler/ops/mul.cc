// Mul: y = a * b with numpy broadcasting (numeric types; integers wrap on overflow).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_mul(ComputeContext& ctx) {
  binary_numeric(ctx, [](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>) return wrap_mul(a, b);
    else return a * b;
  });
}

const OpDef& op_def_Mul() {
  static const OpDef def{"Mul", 2, 2, 1, 1, {}, infer_broadcast_numeric, compute_mul};
  return def;
}

}  // namespace mono
