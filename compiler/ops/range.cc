// Range: start, start + delta, ... up to (excluding) limit; the three inputs are scalars of
// one dtype (f32, f16, i64, i32), known at compile time. The count is
// max(ceil((limit - start) / delta), 0); a zero delta or an absurd count is rejected.
#include <cmath>

#include "compiler/ops/elementwise.h"
#include "compiler/ops/shape_util.h"

namespace mono {

static double scalar_value(const AttrReader& ctx, const Tensor& t, const char* what) {
  if (t.rank() > 1 || t.numel() != 1) ctx.fail(str_cat(what, " must be a scalar, got ", t.type().str()));
  return t.as_double(0);
}

static int64_t range_count(const AttrReader& ctx, const Tensor& start, const Tensor& limit,
                           const Tensor& delta) {
  const char* kStart = "input 0 (start)";
  const char* kLimit = "input 1 (limit)";
  const char* kDelta = "input 2 (delta)";
  double n;
  if (is_int(start.dtype())) {
    scalar_value(ctx, start, kStart);
    scalar_value(ctx, limit, kLimit);
    scalar_value(ctx, delta, kDelta);
    // Exact integer arithmetic (int64 differences may not fit in a double).
    const __int128 s = start.as_int(0), l = limit.as_int(0), d = delta.as_int(0);
    if (d == 0) ctx.fail("delta is 0");
    const __int128 diff = l - s;
    __int128 q = diff / d;
    if (diff % d != 0 && ((diff < 0) == (d < 0))) ++q;  // ceil for a positive quotient
    n = q <= 0 ? 0.0 : static_cast<double>(q);
  } else {
    const double s = scalar_value(ctx, start, kStart);
    const double l = scalar_value(ctx, limit, kLimit);
    const double d = scalar_value(ctx, delta, kDelta);
    if (d == 0) ctx.fail("delta is 0");
    n = std::ceil((l - s) / d);
    if (std::isnan(n)) ctx.fail(str_cat("the element count of range(", s, ", ", l, ", ", d, ") is not a number"));
    if (n < 0) n = 0;
  }
  if (n > static_cast<double>(kMaxTensorElements))
    ctx.fail(str_cat("range would have ", n, " elements; at most ", kMaxTensorElements,
                     " are supported"));
  return static_cast<int64_t>(n);
}

static void infer_range(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::kF32, DType::kF16, DType::kI64, DType::kI32});
  ctx.expect_same_dtype(0, 1);
  ctx.expect_same_dtype(0, 2);
  const int64_t n = range_count(ctx, ctx.require_known(0, "start"), ctx.require_known(1, "limit"),
                                ctx.require_known(2, "delta"));
  ctx.set_output(0, ctx.input_dtype(0), {n});
}

static void compute_range(ComputeContext& ctx) {
  const Tensor& start = ctx.input(0);
  const Tensor& delta = ctx.input(2);
  Tensor& y = ctx.output(0);
  const int64_t n = range_count(ctx, start, ctx.input(1), delta);
  MONO_CHECK(n == y.numel(), "range count changed");
  visit_dtype(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* out = y.mutable_data<T>();
    if constexpr (std::is_integral_v<T>) {
      // In uint64 (wrapping): every element lies between start and limit, but i * delta
      // alone may not fit in int64.
      const uint64_t s = static_cast<uint64_t>(start.as_int(0));
      const uint64_t d = static_cast<uint64_t>(delta.as_int(0));
      for (int64_t i = 0; i < n; ++i)
        out[i] = static_cast<T>(static_cast<int64_t>(s + static_cast<uint64_t>(i) * d));
    } else {
      const float s = static_cast<float>(start.as_double(0));
      const float d = static_cast<float>(delta.as_double(0));
      for (int64_t i = 0; i < n; ++i) out[i] = store<T>(s + static_cast<float>(i) * d);
    }
  });
}

const OpDef& op_def_Range() {
  static const OpDef def{"Range", 3, 3, 1, 1, {}, infer_range, compute_range};
  return def;
}

}  // namespace mono
