// Sub: y = a - b with numpy broadcasting (numeric types; integers wrap on overflow).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_sub(ComputeContext& ctx) {
  binary_numeric(ctx, [](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>) return wrap_sub(a, b);
    else return a - b;
  });
}

const OpDef& op_def_Sub() {
  static const OpDef def{"Sub", 2, 2, 1, 1, {}, infer_broadcast_numeric, compute_sub};
  return def;
}

}  // namespace mono
