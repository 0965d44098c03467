// GatherElements: out[i][j][k] = data[index][j][k] (axis 0; likewise for other axes) where
// index = indices[i][j][k] (i32 or i64, negative counts from the end). indices has the
// data's rank and, off the axis, dimensions no larger than the data's.
#include "compiler/ops/shape_util.h"

namespace mono {

static void infer_gather_elements(InferContext& ctx) {
  const TensorType& data = ctx.input(0);
  const TensorType& indices = ctx.input(1);
  ctx.expect_dtype(1, {DType::kI64, DType::kI32});
  const int64_t rank = data.rank();
  const int64_t axis = ctx.axis(ctx.attr_int("axis"), rank);
  if (indices.rank() != rank)
    ctx.fail(str_cat("indices ", indices.str(), " must have the rank of data ", data.str()));
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indices.shape[d] > data.shape[d])
      ctx.fail(str_cat("indices ", indices.str(), " exceed data ", data.str(), " on axis ", d));
  // Known indices are checked now: a corrupt model fails early.
  if (const Tensor* known = ctx.known(1)) {
    const int64_t dim = data.shape[axis];
    for (int64_t i = 0, n = known->numel(); i < n; ++i) {
      const int64_t v = known->as_int(i);
      if (v < -dim || v >= dim)
        ctx.fail(str_cat("index ", v, " is out of range for axis ", axis, " of size ", dim));
    }
  }
  ctx.set_output(0, data.dtype, indices.shape);
}

static void compute_gather_elements(ComputeContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  Tensor& y = ctx.output(0);
  const int64_t rank = data.rank();
  int64_t axis = ctx.attr_int("axis");
  if (axis < 0) axis += rank;
  const Shape& ds = data.shape();
  const Shape& is = indices.shape();
  const int64_t dim = ds[axis];
  std::vector<int64_t> stride(rank, 1);  // of the data
  for (int64_t d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * ds[d + 1];
  const size_t es = dtype_size(data.dtype());
  const uint8_t* src = bytes_of(data);
  uint8_t* dst = mutable_bytes_of(y);
  std::vector<int64_t> pos(rank, 0);
  int64_t base = 0;  // data offset of pos with the axis coordinate 0
  for (int64_t i = 0, n = indices.numel(); i < n; ++i) {
    int64_t v = indices.as_int(i);
    if (v < -dim || v >= dim)
      ctx.fail(str_cat("index ", v, " is out of range for axis ", axis, " of size ", dim));
    if (v < 0) v += dim;
    std::memcpy(dst + i * es, src + (base + v * stride[axis]) * es, es);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (d != axis) base += stride[d];
      if (++pos[d] < is[d]) break;
      if (d != axis) base -= stride[d] * is[d];
      pos[d] = 0;
    }
  }
}

const OpDef& op_def_GatherElements() {
  static const OpDef def{"GatherElements", 2, 2, 1, 1, {attr("axis", int64_t{0})},
                         infer_gather_elements, compute_gather_elements};
  return def;
}

}  // namespace mono
