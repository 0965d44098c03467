// HardSwish: y = x * max(0, min(1, x / 6 + 1/2)) (float types; opset 14). MobileNetV3's
// activation; torch exports nn.Hardswish as this op.
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_hard_swish(ComputeContext& ctx) {
  unary_float(ctx, [](float x) { return x * std::fmax(0.0f, std::fmin(1.0f, x * (1.0f / 6.0f) + 0.5f)); });
}

const OpDef& op_def_HardSwish() {
  static const OpDef def{"HardSwish", 1, 1, 1, 1, {}, infer_unary_float, compute_hard_swish};
  return def;
}

}  // namespace mono
