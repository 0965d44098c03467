// Concat: joins the inputs along `axis` (negative counts from the end). All inputs share the
// dtype, the rank and every dimension but the axis, which may be 0 for some of them.
#include "compiler/ops/shape_util.h"

namespace mono {

static void infer_concat(InferContext& ctx) {
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (!ctx.has_input(i)) ctx.fail(str_cat("input ", i, " is missing"));
  const TensorType& first = ctx.input(0);
  const int64_t rank = first.rank();
  const int64_t axis = ctx.axis(ctx.attr_int("axis"), rank);
  Shape out = first.shape;
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    const TensorType& t = ctx.input(i);
    ctx.expect_same_dtype(0, i);
    bool ok = t.rank() == rank;
    for (int64_t d = 0; ok && d < rank; ++d) ok = d == axis || t.shape[d] == first.shape[d];
    if (!ok)
      ctx.fail(str_cat("input ", i, " ", t.str(), " does not match input 0 ", first.str(),
                       " outside axis ", axis));
    out[axis] += t.shape[axis];
  }
  ctx.set_output(0, first.dtype, out);
}

static void compute_concat(ComputeContext& ctx) {
  Tensor& y = ctx.output(0);
  const int64_t rank = y.rank();
  int64_t axis = ctx.attr_int("axis");
  if (axis < 0) axis += rank;
  const size_t es = dtype_size(y.dtype());
  const int64_t outer = dims_product(y.shape(), 0, axis);
  const int64_t inner = dims_product(y.shape(), axis + 1, rank);
  const size_t out_row = static_cast<size_t>(y.shape()[axis] * inner) * es;
  uint8_t* dst = mutable_bytes_of(y);
  size_t col = 0;  // bytes of each output row already filled by earlier inputs
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& x = ctx.input(i);
    const size_t row = static_cast<size_t>(x.shape()[axis] * inner) * es;
    if (row == 0) continue;
    const uint8_t* src = bytes_of(x);
    for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + o * out_row + col, src + o * row, row);
    col += row;
  }
}

const OpDef& op_def_Concat() {
  static const OpDef def{"Concat", 1, -1, 1, 1, {attr_required("axis", AttrType::kInt)},
                         infer_concat, compute_concat};
  return def;
}

}  // namespace mono
