// PRelu: y = x for x >= 0, slope * x below, where slope broadcasts to x's shape (numpy rules,
// one direction: the output has x's shape). Float types.
#include "compiler/ops/elementwise.h"

namespace mono {

static void infer_p_relu(InferContext& ctx) {
  ctx.expect_float(0);
  infer_broadcast(ctx);
  Shape out;
  if (!broadcast_shapes({&ctx.input_shape(0), &ctx.input_shape(1)}, &out) || out != ctx.input_shape(0))
    ctx.fail(str_cat("slope ", ctx.input(1).str(), " does not broadcast to x ", ctx.input(0).str()));
}

static void compute_p_relu(ComputeContext& ctx) {
  binary_numeric(ctx, [](auto x, auto slope) { return x < 0 ? slope * x : x; });
}

const OpDef& op_def_PRelu() {
  static const OpDef def{"PRelu", 2, 2, 1, 1, {}, infer_p_relu, compute_p_relu};
  return def;
}

}  // namespace mono
