// Gemm: Y = alpha * op(A) * op(B) + beta * C with op = transpose when transA/transB is set;
// C (optional from opset 11) broadcasts unidirectionally to M x N.
#include "compiler/ops/elementwise.h"
#include "compiler/ops/linalg.h"

namespace mono {

namespace {

void infer_gemm(InferContext& ctx) {
  ctx.expect_float(0);
  ctx.expect_same_dtype(0, 1);
  ctx.expect_rank(0, 2);
  ctx.expect_rank(1, 2);
  const Shape& a = ctx.input_shape(0);
  const Shape& b = ctx.input_shape(1);
  const bool ta = ctx.attr_int("transA") != 0, tb = ctx.attr_int("transB") != 0;
  const int64_t M = ta ? a[1] : a[0], K = ta ? a[0] : a[1];
  const int64_t Kb = tb ? b[1] : b[0], N = tb ? b[0] : b[1];
  if (K != Kb) {
    ctx.fail(str_cat("inner dimensions differ: A is ", shape_str(a), (ta ? " (transposed)" : ""),
                     " and B is ", shape_str(b), (tb ? " (transposed)" : ""), " (", K, " vs ", Kb,
                     ")"));
  }
  if (ctx.has_input(2)) {
    ctx.expect_same_dtype(0, 2);
    const Shape& c = ctx.input_shape(2);
    Shape mn{M, N}, out;
    if (c.size() > 2 || !broadcast_shapes({&mn, &c}, &out) || out != mn)
      ctx.fail(str_cat("C of shape ", shape_str(c), " does not broadcast to ", M, "x", N));
  }
  ctx.set_output(0, ctx.input_dtype(0), Shape{M, N});
}

void compute_gemm(ComputeContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& y = ctx.output(0);
  const bool ta = ctx.attr_int("transA") != 0, tb = ctx.attr_int("transB") != 0;
  const float alpha = ctx.attr_float("alpha");
  float beta = ctx.attr_float("beta");
  const int64_t M = y.shape()[0], N = y.shape()[1];
  const int64_t K = ta ? a.shape()[0] : a.shape()[1];
  FloatView av(a), bv(b);
  FloatOut out(y);
  float* py = out.data();
  if (ctx.has_input(2) && beta != 0.0f) {
    // Y starts as C broadcast to M x N; the product adds onto beta * Y.
    const Tensor& c = ctx.input(2);
    FloatView cv(c);
    const Shape mn{M, N};
    for_each_broadcast<1>(mn, {&c.shape()},
                          [&](int64_t i, const std::array<int64_t, 1>& o) { py[i] = cv[o[0]]; });
  } else {
    beta = 0.0f;
  }
  gemm_f32(ta, tb, M, N, K, alpha, av.data(), a.shape()[1], bv.data(), b.shape()[1], beta, py, N);
  out.finish();
}

}  // namespace

const OpDef& op_def_Gemm() {
  static const OpDef def{"Gemm",
                         2,
                         3,
                         1,
                         1,
                         {attr("alpha", 1.0f), attr("beta", 1.0f), attr("transA", int64_t{0}),
                          attr("transB", int64_t{0}),
                          // Before opset 7: whether C broadcasts; accepted, C always may.
                          attr("broadcast", int64_t{0})},
                         infer_gemm,
                         compute_gemm};
  return def;
}

}  // namespace mono
