// Mod: the remainder of a / b with numpy broadcasting (numeric types). fmod = 0 (integers
// only): the sign of the divisor, Python's %; fmod = 1: the sign of the dividend, C's fmod
// (required for floats). An integer remainder by 0 is 0, as numpy gives.
#include "compiler/ops/elementwise.h"

namespace mono {

static void infer_mod(InferContext& ctx) {
  expect_numeric(ctx, 0);
  if (is_float(ctx.input_dtype(0)) && ctx.attr_int("fmod") != 1)
    ctx.fail("a floating-point Mod needs fmod = 1");
  infer_broadcast(ctx);
}

static void compute_mod(ComputeContext& ctx) {
  const bool c_fmod = ctx.attr_int("fmod") != 0;
  binary_numeric(ctx, [=](auto a, auto b) {
    using C = decltype(a);
    if constexpr (std::is_floating_point_v<C>) {
      return std::fmod(a, b);
    } else {
      if (b == 0) return C{0};
      if (b == -1) return C{0};  // also avoids INT64_MIN % -1
      C r = a % b;
      if (!c_fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
  });
}

const OpDef& op_def_Mod() {
  static const OpDef def{"Mod", 2, 2, 1, 1, {attr("fmod", int64_t{0})}, infer_mod, compute_mod};
  return def;
}

}  // namespace mono
