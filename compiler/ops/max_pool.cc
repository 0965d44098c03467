// MaxPool: the maximum over each (dilated, strided, padded) window of every N x C plane.
// The optional second output Indices holds each maximum's flat index into X, with the
// spatial part row-major (storage_order 0) or column-major (storage_order 1).
#include <algorithm>
#include <limits>

#include "compiler/ops/linalg.h"
#include "compiler/ops/pool.h"
#include "compiler/ops/transpose.h"

namespace mono {

namespace {

void infer_max_pool(InferContext& ctx) {
  ctx.expect_float(0);
  if (channels_last_layout(ctx.node())) {  // [N][H][W][C]: the standard rule on the permuted shape
    if (ctx.input_shape(0).size() != 4 || (ctx.num_outputs() > 1 && ctx.node().outputs[1]))
      ctx.fail("a channels-last MaxPool must be 2-D, without Indices");
    const WindowGeometry g = pool_geometry(ctx, permute_shape(ctx.input_shape(0), kNhwcToNchw));
    const Shape& x = ctx.input_shape(0);
    ctx.set_output(0, ctx.input_dtype(0), {x[0], g.out[0], g.out[1], x[3]});
    return;
  }
  const Shape& x = ctx.input_shape(0);
  const WindowGeometry g = pool_geometry(ctx, x);
  const int64_t order = ctx.attr_int("storage_order");
  if (order != 0 && order != 1) ctx.fail(str_cat("storage_order must be 0 or 1, got ", order));
  Shape out{x[0], x[1]};
  out.insert(out.end(), g.out.begin(), g.out.end());
  ctx.set_output(0, ctx.input_dtype(0), out);
  ctx.set_output(1, DType::kI64, out);
}

void compute_max_pool_nchw(ComputeContext& ctx);

// A channels-last MaxPool is computed as the standard one over permuted copies.
void compute_max_pool(ComputeContext& ctx) {
  if (!channels_last_layout(ctx.node())) {
    compute_max_pool_nchw(ctx);
    return;
  }
  compute_channels_last(ctx, compute_max_pool_nchw);
}

void compute_max_pool_nchw(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const Shape& xs = x.shape();
  const WindowGeometry g = pool_geometry(ctx, xs);
  const WindowTable t = window_table(g);
  const int64_t planes = xs[0] * xs[1], S = g.in_numel(), P = g.out_numel();
  FloatView xv(x);
  FloatOut out(y);
  const float* px = xv.data();
  float* py = out.data();
  const bool want_indices = ctx.has_output(1);
  int64_t* pi = want_indices ? ctx.output(1).mutable_data<int64_t>() : nullptr;
  // Column-major spatial index of each row-major one, when asked for.
  std::vector<int64_t> col_major;
  if (want_indices && ctx.attr_int("storage_order") == 1) {
    const size_t r = g.rank();
    col_major.resize(static_cast<size_t>(S));
    std::vector<int64_t> idx(r, 0);
    for (int64_t i = 0; i < S; ++i) {
      int64_t c = 0, stride = 1;
      for (size_t d = 0; d < r; ++d) {
        c += idx[d] * stride;
        stride *= g.in[d];
      }
      col_major[i] = c;
      for (size_t d = r; d-- > 0;) {
        if (++idx[d] < g.in[d]) break;
        idx[d] = 0;
      }
    }
  }
  for (int64_t p = 0; p < planes; ++p) {
    const float* src = px + p * S;
    for (int64_t o = 0; o < P; ++o) {
      float best = -std::numeric_limits<float>::infinity();
      int64_t best_off = -1;
      for (int64_t k = t.start[o]; k < t.start[o + 1]; ++k) {
        const float v = src[t.offsets[k]];
        if (v > best || best_off < 0) {
          best = v;
          best_off = t.offsets[k];
        }
      }
      py[p * P + o] = best;
      if (pi) {
        int64_t spatial = std::max<int64_t>(best_off, 0);  // an empty window reports 0
        if (!col_major.empty()) spatial = col_major[spatial];
        pi[p * P + o] = p * S + spatial;
      }
    }
  }
  out.finish();
}

}  // namespace

const OpDef& op_def_MaxPool() {
  static const OpDef def{
      "MaxPool",
      1,
      1,
      1,
      2,
      {attr("auto_pad", "NOTSET"), attr("ceil_mode", int64_t{0}), attr_ints("dilations"),
       attr_required("kernel_shape", AttrType::kInts), attr_ints("pads"),
       attr("storage_order", int64_t{0}), attr_ints("strides"), attr(kChannelsLastAttr, int64_t{0})},
      infer_max_pool,
      compute_max_pool};
  return def;
}

}  // namespace mono
