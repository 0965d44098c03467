// Tile: x repeated repeats[d] times along each axis d (repeats: input 1, one non-negative
// integer per axis, known at compile time). Output element o reads x at o mod x's shape.
#include "compiler/ops/shape_util.h"

namespace mono {

static Shape tile_shape(const AttrReader& ctx, const Shape& in, const std::vector<int64_t>& repeats) {
  if (repeats.size() != in.size())
    ctx.fail(str_cat("repeats has ", repeats.size(), " values for an input of rank ", in.size()));
  Shape out(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    if (repeats[d] < 0) ctx.fail(str_cat("repeats[", d, "] = ", repeats[d], " is negative"));
    out[d] = in[d] * repeats[d];
  }
  return out;
}

static void infer_tile(InferContext& ctx) {
  ctx.set_output(0, ctx.input_dtype(0), tile_shape(ctx, ctx.input_shape(0), known_ints(ctx, 1, "repeats")));
}

static void compute_tile(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const Shape& xs = x.shape();
  const Shape& ys = y.shape();
  const size_t es = dtype_size(x.dtype());
  const uint8_t* in = bytes_of(x);
  uint8_t* out = mutable_bytes_of(y);
  const size_t r = xs.size();
  std::vector<int64_t> idx(r, 0);
  for (int64_t e = 0, n = y.numel(); e < n; ++e) {
    int64_t src = 0;
    for (size_t d = 0; d < r; ++d) src = src * xs[d] + idx[d] % xs[d];
    std::memcpy(out + e * es, in + src * es, es);
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < ys[d]) break;
      idx[d] = 0;
    }
  }
}

const OpDef& op_def_Tile() {
  static const OpDef def{"Tile", 2, 2, 1, 1, {}, infer_tile, compute_tile};
  return def;
}

}  // namespace mono
