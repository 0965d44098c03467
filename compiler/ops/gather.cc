// Gather: picks slices of the data along `axis` by the (i32 or i64) indices; negative
// indices count from the end. Output shape: data[:axis] + indices + data[axis+1:].
#include "compiler/ops/shape_util.h"

namespace mono {

// Wraps negative indices; fails on one out of [-dim, dim).
static std::vector<int64_t> checked_indices(const AttrReader& ctx, const Tensor& indices,
                                            int64_t axis, int64_t dim) {
  std::vector<int64_t> idx = indices.to_int_vector();
  for (int64_t& v : idx) {
    if (v < -dim || v >= dim)
      ctx.fail(str_cat("index ", v, " is out of range for axis ", axis, " of size ", dim));
    if (v < 0) v += dim;
  }
  return idx;
}

static void infer_gather(InferContext& ctx) {
  const TensorType& data = ctx.input(0);
  const TensorType& indices = ctx.input(1);
  ctx.expect_dtype(1, {DType::kI64, DType::kI32});
  const int64_t axis = ctx.axis(ctx.attr_int("axis"), data.rank());
  Shape out(data.shape.begin(), data.shape.begin() + axis);
  out.insert(out.end(), indices.shape.begin(), indices.shape.end());
  out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
  // Known indices are checked now: a corrupt model fails early.
  if (const Tensor* known = ctx.known(1)) checked_indices(ctx, *known, axis, data.shape[axis]);
  ctx.set_output(0, data.dtype, out);
}

static void compute_gather(ComputeContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  Tensor& y = ctx.output(0);
  const int64_t rank = data.rank();
  int64_t axis = ctx.attr_int("axis");
  if (axis < 0) axis += rank;
  const int64_t dim = data.shape()[axis];
  const int64_t outer = dims_product(data.shape(), 0, axis);
  const int64_t inner = dims_product(data.shape(), axis + 1, rank);
  const int64_t n = indices.numel();
  // Every index is checked before anything is read.
  const std::vector<int64_t> idx = checked_indices(ctx, indices, axis, dim);
  const size_t es = dtype_size(data.dtype());
  const size_t row = static_cast<size_t>(inner) * es;
  if (row == 0) return;
  const uint8_t* src = bytes_of(data);
  uint8_t* dst = mutable_bytes_of(y);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j)
      std::memcpy(dst + (o * n + j) * row, src + (o * dim + idx[j]) * row, row);
}

const OpDef& op_def_Gather() {
  static const OpDef def{"Gather", 2, 2, 1, 1, {attr("axis", int64_t{0})}, infer_gather,
                         compute_gather};
  return def;
}

}  // namespace mono
