// GlobalAveragePool: the mean over all spatial axes of every N x C plane; the spatial axes
// stay as 1s.
#include "compiler/ops/linalg.h"
#include "compiler/ops/op.h"

namespace mono {

namespace {

void infer_global_average_pool(InferContext& ctx) {
  ctx.expect_float(0);
  const Shape& x = ctx.input_shape(0);
  if (x.size() < 2) ctx.fail(str_cat("input must be N x C x spatial..., got ", shape_str(x)));
  Shape out(x.size(), 1);
  out[0] = x[0];
  out[1] = x[1];
  ctx.set_output(0, ctx.input_dtype(0), out);
}

void compute_global_average_pool(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const int64_t S = planes ? x.numel() / planes : 0;
  FloatView xv(x);
  FloatOut out(y);
  for (int64_t p = 0; p < planes; ++p) {
    const float* src = xv.data() + p * S;
    float sum = 0.0f;
    for (int64_t i = 0; i < S; ++i) sum += src[i];
    out.data()[p] = sum / static_cast<float>(S);
  }
  out.finish();
}

}  // namespace

const OpDef& op_def_GlobalAveragePool() {
  static const OpDef def{"GlobalAveragePool",        1, 1, 1, 1, {}, infer_global_average_pool,
                         compute_global_average_pool};
  return def;
}

}  // namespace mono
