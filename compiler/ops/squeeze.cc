// Squeeze: removes dimensions of size 1: those listed in `axes` (attribute before opset 13,
// optional input 1 from opset 13), or all of them when no axes are given.
#include "compiler/ops/shape_util.h"

namespace mono {

static void infer_squeeze(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  const int64_t rank = in.rank();
  bool have_axes = false;
  std::vector<int64_t> axes;
  if (ctx.opset() >= 13) {
    if (ctx.has_input(1)) {
      have_axes = true;
      axes = known_ints(ctx, 1, "axes");
    }
  } else if (ctx.has_attr("axes")) {
    have_axes = true;
    axes = ctx.attr_ints("axes");
  }
  std::vector<bool> drop(rank, false);
  if (have_axes) {
    for (int64_t a : checked_axes(ctx, axes, rank)) {
      if (in.shape[a] != 1)
        ctx.fail(str_cat("cannot squeeze axis ", a, " of ", in.str(), ": its size is not 1"));
      drop[a] = true;
    }
  } else {
    for (int64_t i = 0; i < rank; ++i) drop[i] = in.shape[i] == 1;
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i]) out.push_back(in.shape[i]);
  ctx.set_output(0, in.dtype, out);
}

static void compute_squeeze(ComputeContext& ctx) { forward_input_bytes(ctx); }

const OpDef& op_def_Squeeze() {
  static const OpDef def{"Squeeze", 1, 2, 1, 1, {attr_ints("axes")}, infer_squeeze,
                         compute_squeeze};
  return def;
}

}  // namespace mono
