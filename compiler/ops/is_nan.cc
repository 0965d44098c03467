// IsNaN: y = (x is NaN), float input, bool output.
#include "compiler/ops/elementwise.h"

namespace mono {

static void infer_is_nan(InferContext& ctx) {
  ctx.expect_float(0);
  ctx.set_output(0, DType::kBool, ctx.input_shape(0));
}

static void compute_is_nan(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  uint8_t* out = ctx.output(0).mutable_data<uint8_t>();
  visit_float(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data<T>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) out[i] = std::isnan(load(in[i])) ? 1 : 0;
  });
}

const OpDef& op_def_IsNaN() {
  static const OpDef def{"IsNaN", 1, 1, 1, 1, {}, infer_is_nan, compute_is_nan};
  return def;
}

}  // namespace mono
