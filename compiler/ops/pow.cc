// Pow: y = a ^ b with numpy broadcasting. The base is a float or integer tensor and gives the
// output dtype; the exponent may have another numeric dtype.
//   float base: computed in double and rounded once.
//   integer base, integer exponent: exact (wrapping on overflow like numpy); a negative
//     exponent gives the truncated 1 / a^-b (0 unless a is 1 or -1); 0 ^ negative is an error.
//   integer base, float exponent: the double result truncated toward zero (saturating).
#include "compiler/ops/elementwise.h"

namespace mono {

static void infer_pow(InferContext& ctx) {
  expect_numeric(ctx, 0);
  expect_numeric(ctx, 1);
  ctx.set_output(0, ctx.input_dtype(0), broadcast_inputs(ctx));
}

static int64_t int_pow(const ComputeContext& ctx, int64_t a, int64_t b) {
  if (b < 0) {
    if (a == 0) ctx.fail("integer zero raised to a negative power");
    if (a == 1) return 1;
    if (a == -1) return (b & 1) ? -1 : 1;
    return 0;
  }
  uint64_t result = 1, base = static_cast<uint64_t>(a);
  for (uint64_t e = static_cast<uint64_t>(b); e; e >>= 1) {
    if (e & 1) result *= base;
    base *= base;
  }
  return static_cast<int64_t>(result);
}

// out[i] = f(a[ia], b[ib]) over the broadcast of a and b (which may differ in dtype).
template <typename T, typename E, typename F>
static void pow_loop(const Tensor& a, const Tensor& b, Tensor& y, F f) {
  const T* pa = a.data<T>();
  const E* pb = b.data<E>();
  T* out = y.mutable_data<T>();
  if (a.shape() == b.shape()) {
    for (int64_t i = 0, n = y.numel(); i < n; ++i) out[i] = f(load(pa[i]), load(pb[i]));
    return;
  }
  for_each_broadcast<2>(y.shape(), {&a.shape(), &b.shape()},
                        [&](int64_t i, const std::array<int64_t, 2>& o) {
                          out[i] = f(load(pa[o[0]]), load(pb[o[1]]));
                        });
}

static void compute_pow(ComputeContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& y = ctx.output(0);
  visit_dtype(a.dtype(), [&](auto base_tag) {
    using T = decltype(base_tag);
    visit_dtype(b.dtype(), [&](auto exp_tag) {
      using E = decltype(exp_tag);
      if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<E, uint8_t>) {
        MONO_CHECK(false, "Pow on bool");
      } else if constexpr (std::is_floating_point_v<compute_t<T>>) {
        if (b.numel() == 1 && b.as_double(0) == 2.0) {  // the common x^2: one multiply
          pow_loop<T, E>(a, b, y, [](auto x, auto) {
            double d = static_cast<double>(x);
            return store<T>(d * d);
          });
          return;
        }
        pow_loop<T, E>(a, b, y, [](auto x, auto e) {
          return store<T>(std::pow(static_cast<double>(x), static_cast<double>(e)));
        });
      } else if constexpr (std::is_floating_point_v<compute_t<E>>) {
        pow_loop<T, E>(a, b, y, [](auto x, auto e) {
          return float_to_int<T>(std::pow(static_cast<double>(x), static_cast<double>(e)));
        });
      } else {
        pow_loop<T, E>(a, b, y, [&](auto x, auto e) { return store<T>(int_pow(ctx, x, e)); });
      }
    });
  });
}

const OpDef& op_def_Pow() {
  static const OpDef def{"Pow", 2, 2, 1, 1, {}, infer_pow, compute_pow};
  return def;
}

}  // namespace mono
