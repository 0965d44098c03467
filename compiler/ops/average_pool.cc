// AveragePool: the mean over each (strided, padded, from opset 19 dilated) window of every
// N x C plane. count_include_pad divides by the window size counting padding, else by the
// number of input elements in the window.
#include "compiler/ops/linalg.h"
#include "compiler/ops/pool.h"

namespace mono {

namespace {

void infer_average_pool(InferContext& ctx) {
  ctx.expect_float(0);
  const Shape& x = ctx.input_shape(0);
  const WindowGeometry g = pool_geometry(ctx, x);
  Shape out{x[0], x[1]};
  out.insert(out.end(), g.out.begin(), g.out.end());
  ctx.set_output(0, ctx.input_dtype(0), out);
}

void compute_average_pool(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const Shape& xs = x.shape();
  const WindowGeometry g = pool_geometry(ctx, xs);
  const WindowTable t = window_table(g);
  const bool include_pad = ctx.attr_int("count_include_pad") != 0;
  const int64_t planes = xs[0] * xs[1], S = g.in_numel(), P = g.out_numel();
  std::vector<float> inv(static_cast<size_t>(P));
  for (int64_t o = 0; o < P; ++o) {
    const int64_t count = include_pad ? t.padded_count[o] : t.start[o + 1] - t.start[o];
    inv[o] = 1.0f / static_cast<float>(count);
  }
  FloatView xv(x);
  FloatOut out(y);
  const float* px = xv.data();
  float* py = out.data();
  for (int64_t p = 0; p < planes; ++p) {
    const float* src = px + p * S;
    for (int64_t o = 0; o < P; ++o) {
      float sum = 0.0f;
      for (int64_t k = t.start[o]; k < t.start[o + 1]; ++k) sum += src[t.offsets[k]];
      py[p * P + o] = sum * inv[o];
    }
  }
  out.finish();
}

}  // namespace

const OpDef& op_def_AveragePool() {
  static const OpDef def{
      "AveragePool",
      1,
      1,
      1,
      1,
      {attr("auto_pad", "NOTSET"), attr("ceil_mode", int64_t{0}),
       attr("count_include_pad", int64_t{0}), attr_ints("dilations"),
       attr_required("kernel_shape", AttrType::kInts), attr_ints("pads"), attr_ints("strides")},
      infer_average_pool,
      compute_average_pool};
  return def;
}

}  // namespace mono
