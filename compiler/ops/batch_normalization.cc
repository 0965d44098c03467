// BatchNormalization, inference form: Y = scale * (X - mean) / sqrt(var + epsilon) + B per
// channel (axis 1). Training mode and the running/saved statistics outputs are not supported.
// Before opset 9, spatial = 0 gives per-element statistics of shape C x D1 x ... x Dn. The
// attributes of opsets before 7 (is_test, consumed_inputs) are accepted and ignored.
#include <cmath>

#include "compiler/ops/linalg.h"
#include "compiler/ops/op.h"

namespace mono {

namespace {

void infer_batch_normalization(InferContext& ctx) {
  ctx.expect_float(0);
  if (ctx.attr_int("training_mode") != 0)
    ctx.fail("training_mode = 1 is not supported (Mono compiles inference graphs)");
  for (int i = 1; i < ctx.num_outputs(); ++i) {
    if (ctx.node().outputs[i] != nullptr)
      ctx.fail(
          str_cat("output ", i, " (training statistics) is not supported: only Y can be computed"));
  }
  const Shape& x = ctx.input_shape(0);
  if (x.size() < 2) ctx.fail(str_cat("X must be N x C x ..., got ", shape_str(x)));
  const int64_t C = x[1];
  const int64_t per_elem = shape_numel(Shape(x.begin() + 1, x.end()));
  const char* names[] = {"", "scale", "B", "mean", "var"};
  for (int i = 1; i < 5; ++i) {
    ctx.expect_float(i);
    const TensorType& t = ctx.input(i);
    const bool per_channel = t.rank() == 1 && t.shape[0] == C;
    const bool per_element = ctx.opset() < 9 && ctx.attr_int("spatial") == 0 &&
                             t.numel() == per_elem &&
                             t.rank() == static_cast<int64_t>(x.size()) - 1 && t.shape[0] == C;
    if (!per_channel && !per_element)
      ctx.fail(str_cat(names[i], " of shape ", shape_str(t.shape), " does not match X of shape ",
                       shape_str(x), " (expected ", C, ")"));
  }
  ctx.set_output(0, ctx.input_dtype(0), x);
}

void compute_batch_normalization(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const float eps = ctx.attr_float("epsilon");
  const int64_t N = x.shape()[0], C = x.shape()[1];
  const int64_t inner = N * C != 0 ? x.numel() / (N * C) : 0;
  // Statistics per channel (repeated `inner` times) or per element of a sample.
  const int64_t n_stat = ctx.input(1).numel();
  const int64_t stat_inner = n_stat == C ? 1 : inner;
  FloatView scale(ctx.input(1)), bias(ctx.input(2)), mean(ctx.input(3)), var(ctx.input(4));
  std::vector<float> a(static_cast<size_t>(n_stat)), b(static_cast<size_t>(n_stat));
  for (int64_t i = 0; i < n_stat; ++i) {
    a[i] = scale[i] / std::sqrt(var[i] + eps);
    b[i] = bias[i] - mean[i] * a[i];
  }
  FloatView xv(x);
  FloatOut out(y);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      const float* src = xv.data() + (n * C + c) * inner;
      float* dst = out.data() + (n * C + c) * inner;
      if (stat_inner == 1) {
        const float ac = a[c], bc = b[c];
        for (int64_t i = 0; i < inner; ++i) dst[i] = src[i] * ac + bc;
      } else {
        const float* ac = a.data() + c * inner;
        const float* bc = b.data() + c * inner;
        for (int64_t i = 0; i < inner; ++i) dst[i] = src[i] * ac[i] + bc[i];
      }
    }
  }
  out.finish();
}

}  // namespace

const OpDef& op_def_BatchNormalization() {
  static const OpDef def{"BatchNormalization",
                         5,
                         5,
                         1,
                         5,
                         {attr("epsilon", 1e-5f), attr("momentum", 0.9f),
                          attr("spatial", int64_t{1}), attr("training_mode", int64_t{0}),
                          // Before opset 7 (accepted, ignored: Mono always runs inference).
                          attr("is_test", int64_t{0}), attr_ints("consumed_inputs")},
                         infer_batch_normalization,
                         compute_batch_normalization};
  return def;
}

}  // namespace mono
