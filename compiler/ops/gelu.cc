// Gelu (opset 20, also produced by pattern recognition at any opset): float types.
//   approximate = "none": y = 0.5 x (1 + erf(x / sqrt(2)))
//   approximate = "tanh": y = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
#include "compiler/ops/elementwise.h"

namespace mono {

static bool use_tanh(const AttrReader& ctx) {
  const std::string mode = ctx.attr_string("approximate");
  if (mode == "none") return false;
  if (mode == "tanh") return true;
  ctx.fail(str_cat("approximate must be \"none\" or \"tanh\", got \"", mode, "\""));
}

static void infer_gelu(InferContext& ctx) {
  use_tanh(ctx);
  infer_unary_float(ctx);
}

static void compute_gelu(ComputeContext& ctx) {
  if (use_tanh(ctx)) {
    constexpr float kSqrt2OverPi = 0.7978845608028654f;
    unary_float(ctx, [=](float x) {
      return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
    });
  } else {
    // 1 + erf(t) == erfc(-t), which keeps its precision where erf(t) is close to -1.
    constexpr float kSqrtHalf = 0.7071067811865476f;
    unary_float(ctx, [=](float x) { return 0.5f * x * std::erfc(-x * kSqrtHalf); });
  }
}

const OpDef& op_def_Gelu() {
  static const OpDef def{"Gelu", 1, 1, 1, 1, {attr("approximate", "none")}, infer_gelu,
                         compute_gelu};
  return def;
}

}  // namespace mono
