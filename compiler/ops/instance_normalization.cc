// InstanceNormalization: y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c], the mean and
// (biased) variance taken over the spatial axes of each (n, c) of an N x C x spatial... input;
// epsilon 1e-5 by default. Code generation sees it decomposed (passes/decompose.cc).
#include <cmath>

#include "compiler/ops/linalg.h"
#include "compiler/ops/op.h"

namespace mono {

static void infer_instance_normalization(InferContext& ctx) {
  ctx.expect_float(0);
  const Shape& s = ctx.input_shape(0);
  if (s.size() < 3) ctx.fail(str_cat("input must be N x C x spatial..., got ", ctx.input(0).str()));
  for (int i = 1; i < 3; ++i) {
    ctx.expect_same_dtype(0, i);
    if (ctx.input_shape(i) != Shape{s[1]})
      ctx.fail(str_cat(i == 1 ? "scale " : "B ", ctx.input(i).str(), " must have shape [", s[1], "]"));
  }
  ctx.set_output(0, ctx.input(0));
}

static void compute_instance_normalization(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t C = x.shape()[1], planes = x.shape()[0] * C, per = planes ? x.numel() / planes : 0;
  const double eps = ctx.attr_float("epsilon");
  FloatView in(x), scale(ctx.input(1)), bias(ctx.input(2));
  FloatOut out(ctx.output(0));
  for (int64_t p = 0; p < planes; ++p) {
    const float* src = in.data() + p * per;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < per; ++i) mean += src[i];
    mean /= static_cast<double>(per);
    for (int64_t i = 0; i < per; ++i) var += (src[i] - mean) * (src[i] - mean);
    var /= static_cast<double>(per);
    const double k = scale[p % C] / std::sqrt(var + eps);
    for (int64_t i = 0; i < per; ++i) out.data()[p * per + i] = static_cast<float>((src[i] - mean) * k + bias[p % C]);
  }
  out.finish();
}

const OpDef& op_def_InstanceNormalization() {
  static const OpDef def{"InstanceNormalization", 3, 3, 1, 1, {attr("epsilon", 1e-5f)}, infer_instance_normalization,
                         compute_instance_normalization};
  return def;
}

}  // namespace mono
