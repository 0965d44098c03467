// Where: y = cond ? x : y elementwise, with numpy broadcasting across all three inputs.
#include "compiler/ops/elementwise.h"

namespace mono {

static void infer_where(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::kBool});
  ctx.expect_same_dtype(1, 2);
  ctx.set_output(0, ctx.input_dtype(1), broadcast_inputs(ctx));
}

static void compute_where(ComputeContext& ctx) {
  const Tensor& c = ctx.input(0);
  const Tensor& a = ctx.input(1);
  const Tensor& b = ctx.input(2);
  Tensor& y = ctx.output(0);
  const uint8_t* pc = c.data<uint8_t>();
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* out = y.mutable_data<T>();
    if (c.shape() == y.shape() && a.shape() == y.shape() && b.shape() == y.shape()) {
      for (int64_t i = 0, n = y.numel(); i < n; ++i) out[i] = pc[i] ? pa[i] : pb[i];
      return;
    }
    for_each_broadcast<3>(y.shape(), {&c.shape(), &a.shape(), &b.shape()},
                          [&](int64_t i, const std::array<int64_t, 3>& o) {
                            out[i] = pc[o[0]] ? pa[o[1]] : pb[o[2]];
                          });
  });
}

const OpDef& op_def_Where() {
  static const OpDef def{"Where", 3, 3, 1, 1, {}, infer_where, compute_where};
  return def;
}

}  // namespace mono
