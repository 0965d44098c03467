#include "compiler/ops/arg_extremum.h"

#include <cmath>

#include "compiler/ops/elementwise.h"
#include "compiler/ops/reduce.h"
#include "compiler/ops/shape_util.h"

namespace mono {

void infer_arg_extremum(InferContext& ctx) {
  expect_numeric(ctx, 0);
  const Shape& in = ctx.input_shape(0);
  const int64_t axis = checked_axis(ctx, ctx.attr_int("axis"), static_cast<int64_t>(in.size()), "axis");
  if (in[axis] == 0) ctx.fail(str_cat("axis ", axis, " is empty: no extreme to index"));
  Shape out = in;
  if (ctx.attr_int("keepdims") != 0) out[axis] = 1;
  else out.erase(out.begin() + axis);
  ctx.set_output(0, DType::kI64, out);
}

void compute_arg_extremum(ComputeContext& ctx, bool is_max) {
  const Tensor& x = ctx.input(0);
  const int64_t axis = checked_axis(ctx, ctx.attr_int("axis"), x.rank(), "axis");
  const bool last = ctx.attr_int("select_last_index") != 0;
  int64_t outer, n, inner;
  split_at_axis(x.shape(), axis, &outer, &n, &inner);
  int64_t* out = ctx.output(0).mutable_data<int64_t>();
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        int64_t best = 0;
        auto bv = load(in[o * n * inner + j]);
        for (int64_t i = 1; i < n; ++i) {
          const auto v = load(in[(o * n + i) * inner + j]);
          const bool v_nan = is_nan_value(v), b_nan = is_nan_value(bv);
          const bool better = (is_max ? v > bv : v < bv) || (v_nan && !b_nan);
          const bool equal = v == bv || (v_nan && b_nan);
          if (better || (last && equal)) {
            best = i;
            bv = v;
          }
        }
        out[o * inner + j] = best;
      }
    }
  });
}

}  // namespace mono
