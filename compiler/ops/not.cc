// Not: logical negation of a bool tensor.
#include "compiler/ops/elementwise.h"

namespace mono {

static void infer_not(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::kBool});
  ctx.set_output(0, ctx.input(0));
}

static void compute_not(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const uint8_t* in = x.data<uint8_t>();
  uint8_t* out = ctx.output(0).mutable_data<uint8_t>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) out[i] = in[i] ? 0 : 1;
}

const OpDef& op_def_Not() {
  static const OpDef def{"Not", 1, 1, 1, 1, {}, infer_not, compute_not};
  return def;
}

}  // namespace mono
