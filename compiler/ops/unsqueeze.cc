// Unsqueeze: inserts dimensions of size 1 at `axes` (attribute before opset 13, input 1
// from opset 13). The axes index the output, whose rank is the input's plus their count.
#include "compiler/ops/shape_util.h"

namespace mono {

static void infer_unsqueeze(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  std::vector<int64_t> axes;
  if (ctx.opset() >= 13) {
    if (!ctx.has_input(1)) ctx.fail("input 1 (axes) is required from opset 13");
    axes = known_ints(ctx, 1, "axes");
  } else {
    if (!ctx.has_attr("axes")) ctx.fail("attribute 'axes' is required before opset 13");
    axes = ctx.attr_ints("axes");
  }
  const int64_t out_rank = in.rank() + static_cast<int64_t>(axes.size());
  std::vector<bool> inserted(out_rank, false);
  for (int64_t a : checked_axes(ctx, axes, out_rank)) inserted[a] = true;
  Shape out(out_rank);
  size_t j = 0;
  for (int64_t i = 0; i < out_rank; ++i) out[i] = inserted[i] ? 1 : in.shape[j++];
  ctx.set_output(0, in.dtype, out);
}

static void compute_unsqueeze(ComputeContext& ctx) { forward_input_bytes(ctx); }

const OpDef& op_def_Unsqueeze() {
  static const OpDef def{"Unsqueeze", 1, 2, 1, 1, {attr_ints("axes")}, infer_unsqueeze,
                         compute_unsqueeze};
  return def;
}

}  // namespace mono
