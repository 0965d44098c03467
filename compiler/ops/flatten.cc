// Flatten: a 2-D view of the input, [prod(dims before axis), prod(dims from axis)].
// axis is in [-rank, rank] (negative from opset 11).
#include "compiler/ops/shape_util.h"

namespace mono {

static void infer_flatten(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  const int64_t rank = in.rank();
  int64_t axis = ctx.attr_int("axis");
  if (axis < -rank || axis > rank)
    ctx.fail(str_cat("axis ", axis, " is out of range for rank ", rank));
  if (axis < 0) axis += rank;
  ctx.set_output(0, in.dtype,
                 {dims_product(in.shape, 0, axis), dims_product(in.shape, axis, rank)});
}

static void compute_flatten(ComputeContext& ctx) { forward_input_bytes(ctx); }

const OpDef& op_def_Flatten() {
  static const OpDef def{"Flatten", 1, 1, 1, 1, {attr("axis", int64_t{1})}, infer_flatten,
                         compute_flatten};
  return def;
}

}  // namespace mono
