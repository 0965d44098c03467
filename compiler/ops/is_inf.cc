// IsInf: y = (x is +inf and detect_positive) or (x is -inf and detect_negative); float input,
// bool output. Both are detected by default.
#include "compiler/ops/elementwise.h"

namespace mono {

static void infer_is_inf(InferContext& ctx) {
  ctx.expect_float(0);
  ctx.set_output(0, DType::kBool, ctx.input_shape(0));
}

static void compute_is_inf(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const bool pos = ctx.attr_int("detect_positive") != 0, neg = ctx.attr_int("detect_negative") != 0;
  uint8_t* out = ctx.output(0).mutable_data<uint8_t>();
  visit_float(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data<T>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) {
      const float v = load(in[i]);
      out[i] = std::isinf(v) && (v > 0 ? pos : neg) ? 1 : 0;
    }
  });
}

const OpDef& op_def_IsInf() {
  static const OpDef def{"IsInf", 1, 1, 1, 1, {attr("detect_negative", int64_t{1}), attr("detect_positive", int64_t{1})},
                         infer_is_inf, compute_is_inf};
  return def;
}

}  // namespace mono
