// CumSum: running sums of x along the axis given by input 1 (a scalar, known at compile
// time). exclusive=1 leaves the current element out; reverse=1 sums from the end. float16
// accumulates in float.
#include "compiler/ops/elementwise.h"
#include "compiler/ops/shape_util.h"

namespace mono {

// Integers wrap on overflow (as ONNX runtimes do) instead of being undefined.
static float add(float a, float b) { return a + b; }
static int64_t add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

static void infer_cum_sum(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::kF32, DType::kF16, DType::kI64, DType::kI32});
  const int64_t axis = int_scalar(ctx, ctx.require_known(1, "axis"), "input 1 (axis)");
  ctx.axis(axis, ctx.input(0).rank());
  ctx.set_output(0, ctx.input(0));
}

static void compute_cum_sum(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t rank = x.rank();
  const int64_t axis = checked_axis(ctx, int_scalar(ctx, ctx.input(1), "input 1 (axis)"), rank, "axis");
  const bool exclusive = ctx.attr_int("exclusive") != 0;
  const bool reverse = ctx.attr_int("reverse") != 0;
  const int64_t dim = x.shape()[axis];
  const int64_t outer = dims_product(x.shape(), 0, axis);
  const int64_t inner = dims_product(x.shape(), axis + 1, rank);
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, uint8_t>) {
      MONO_CHECK(false, "CumSum on bool");
    } else {
      const T* in = x.data<T>();
      T* out = y.mutable_data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t j = 0; j < inner; ++j) {
          const int64_t base = o * dim * inner + j;
          compute_t<T> acc{};
          for (int64_t k = 0; k < dim; ++k) {
            const int64_t at = base + (reverse ? dim - 1 - k : k) * inner;
            const compute_t<T> v = load(in[at]);
            if (exclusive) out[at] = store<T>(acc);
            acc = add(acc, v);
            if (!exclusive) out[at] = store<T>(acc);
          }
        }
      }
    }
  });
}

const OpDef& op_def_CumSum() {
  static const OpDef def{"CumSum", 2, 2, 1, 1,
                         {attr("exclusive", int64_t{0}), attr("reverse", int64_t{0})},
                         infer_cum_sum, compute_cum_sum};
  return def;
}

}  // namespace mono
