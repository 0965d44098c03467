// GlobalMaxPool: the maximum over all spatial axes of an N x C x spatial... tensor, keeping
// them with extent 1 (NaN wins, as in ReduceMax). Code generation sees ReduceMax
// (passes/decompose.cc).
#include <cmath>

#include "compiler/ops/linalg.h"
#include "compiler/ops/op.h"

namespace mono {

static void infer_global_max_pool(InferContext& ctx) {
  ctx.expect_float(0);
  Shape s = ctx.input_shape(0);
  if (s.size() < 3) ctx.fail(str_cat("input must be N x C x spatial..., got ", ctx.input(0).str()));
  for (size_t d = 2; d < s.size(); ++d) {
    if (s[d] == 0) ctx.fail(str_cat("spatial axis ", d, " is empty"));
    s[d] = 1;
  }
  ctx.set_output(0, ctx.input_dtype(0), s);
}

static void compute_global_max_pool(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t planes = y.numel(), per = planes ? x.numel() / planes : 0;
  FloatView in(x);
  FloatOut out(y);
  for (int64_t c = 0; c < planes; ++c) {
    float m = -INFINITY;
    for (int64_t i = 0; i < per && !std::isnan(m); ++i) {
      const float v = in[c * per + i];
      m = std::isnan(v) || v > m ? v : m;
    }
    out.data()[c] = m;
  }
  out.finish();
}

const OpDef& op_def_GlobalMaxPool() {
  static const OpDef def{"GlobalMaxPool", 1, 1, 1, 1, {}, infer_global_max_pool, compute_global_max_pool};
  return def;
}

}  // namespace mono
