// ScatterND: a copy of data where, for each row u of indices ([..., q], i64), the slice
// data[indices[u]] (the first q axes indexed, the rest whole) is replaced by updates[u] or,
// with reduction add / mul / max / min (opset 16 / 18), combined with it, rows in order.
// updates has shape indices.shape[:-1] + data.shape[q:]; negative indices count from the end.
#include "compiler/ops/elementwise.h"
#include "compiler/ops/scatter_nd.h"
#include "compiler/ops/shape_util.h"

namespace mono {

ScatterNdShape scatter_nd_shape(const AttrReader& ctx, const Shape& data, const Shape& indices, const Shape& updates) {
  ScatterNdShape s;
  if (indices.empty()) ctx.fail("indices must have rank >= 1");
  s.q = indices.back();
  if (s.q < 1 || s.q > static_cast<int64_t>(data.size()))
    ctx.fail(str_cat("indices' last axis ", s.q, " must be in [1, rank of data ", data.size(), "]"));
  Shape want(indices.begin(), indices.end() - 1);
  want.insert(want.end(), data.begin() + s.q, data.end());
  if (updates != want) ctx.fail(str_cat("updates ", shape_str(updates), " must have shape ", shape_str(want)));
  s.rows = dims_product(indices, 0, indices.size() - 1);
  s.slice = dims_product(data, s.q, data.size());
  const std::string r = ctx.attr_string("reduction");
  if (r == "none") s.reduction = ScatterReduction::kNone;
  else if (r == "add") s.reduction = ScatterReduction::kAdd;
  else if (r == "mul") s.reduction = ScatterReduction::kMul;
  else if (r == "max" && ctx.opset() >= 18) s.reduction = ScatterReduction::kMax;
  else if (r == "min" && ctx.opset() >= 18) s.reduction = ScatterReduction::kMin;
  else ctx.fail(str_cat("reduction '", r, "' is not one of none, add, mul", ctx.opset() >= 18 ? ", max, min" : ""));
  return s;
}

static void infer_scatter_nd(InferContext& ctx) {
  ctx.expect_dtype(1, {DType::kI64});
  ctx.expect_same_dtype(0, 2);
  scatter_nd_shape(ctx, ctx.input_shape(0), ctx.input_shape(1), ctx.input_shape(2));
  ctx.set_output(0, ctx.input(0));
}

static void compute_scatter_nd(ComputeContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  Tensor& y = ctx.output(0);
  const ScatterNdShape s = scatter_nd_shape(ctx, data.shape(), indices.shape(), updates.shape());
  y = data.reshaped(data.shape());  // a copy-on-write view: the writes below copy first
  const int64_t* idx = indices.data<int64_t>();
  visit_dtype(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* out = y.mutable_data<T>();
    const T* up = updates.data<T>();
    for (int64_t u = 0; u < s.rows; ++u) {
      int64_t at = 0;
      for (int64_t k = 0; k < s.q; ++k) {
        const int64_t dim = data.shape()[k];
        int64_t i = idx[u * s.q + k];
        if (i < -dim || i >= dim) ctx.fail(str_cat("index ", i, " is out of range for axis ", k, " of size ", dim));
        at = at * dim + (i < 0 ? i + dim : i);
      }
      for (int64_t e = 0; e < s.slice; ++e) {
        T& o = out[at * s.slice + e];
        const auto a = load(o), b = load(up[u * s.slice + e]);
        switch (s.reduction) {
          case ScatterReduction::kNone: o = up[u * s.slice + e]; break;
          case ScatterReduction::kAdd: o = store<T>(a + b); break;
          case ScatterReduction::kMul: o = store<T>(a * b); break;
          case ScatterReduction::kMax: o = store<T>(b > a ? b : a); break;
          case ScatterReduction::kMin: o = store<T>(b < a ? b : a); break;
        }
      }
    }
  });
}

const OpDef& op_def_ScatterND() {
  static const OpDef def{"ScatterND", 3, 3, 1, 1, {attr("reduction", "none")}, infer_scatter_nd, compute_scatter_nd};
  return def;
}

}  // namespace mono
