// Reshape: the input's elements with the shape given by input 1 (1-D, known at compile
// time). A 0 copies the input's dimension at that index (unless allowzero=1, opset 14:
// then it is a literal 0); one -1 is inferred from the element count.
#include "compiler/ops/shape_util.h"

namespace mono {

static void infer_reshape(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  const Tensor& shape_t = ctx.require_known(1, "shape");
  if (shape_t.rank() != 1) ctx.fail(str_cat("input 1 (shape) must be 1-D, got ", shape_t.type().str()));
  std::vector<int64_t> req = int_values(ctx, shape_t, "input 1 (shape)");
  const bool allowzero = ctx.opset() >= 14 && ctx.attr_int("allowzero") != 0;
  Shape out(req.size());
  int64_t infer_at = -1;
  for (size_t i = 0; i < req.size(); ++i) {
    int64_t d = req[i];
    if (d == -1) {
      if (infer_at >= 0) ctx.fail(str_cat("shape ", shape_str(req), " has more than one -1"));
      infer_at = static_cast<int64_t>(i);
      out[i] = 1;
    } else if (d == 0 && !allowzero) {
      if (i >= in.shape.size())
        ctx.fail(str_cat("shape ", shape_str(req), " has 0 at index ", i,
                         " (copy the input's dimension) but the input ", in.str(), " has rank ",
                         in.rank()));
      out[i] = in.shape[i];
    } else if (d < 0) {
      ctx.fail(str_cat("shape ", shape_str(req), " has an invalid dimension ", d));
    } else {
      out[i] = d;
    }
  }
  const int64_t in_count = in.numel();
  if (infer_at >= 0) {
    int64_t known = shape_numel(out);  // with 1 at the -1
    if (known < 0) ctx.fail(str_cat("shape ", shape_str(req), " is too large"));
    if (known == 0)
      ctx.fail(str_cat("cannot infer the -1 in shape ", shape_str(req), " for input ", in.str(),
                       ": the other dimensions have no elements"));
    if (in_count % known != 0)
      ctx.fail(str_cat("cannot reshape ", in.str(), " (", in_count, " elements) to ",
                       shape_str(req), ": ", in_count, " is not a multiple of ", known));
    out[infer_at] = in_count / known;
  }
  const int64_t out_count = shape_numel(out);
  if (out_count != in_count)
    ctx.fail(str_cat("cannot reshape ", in.str(), " (", in_count, " elements) to ", shape_str(out),
                     " (", out_count < 0 ? std::string("too many") : std::to_string(out_count),
                     " elements)"));
  ctx.set_output(0, in.dtype, out);
}

static void compute_reshape(ComputeContext& ctx) { forward_input_bytes(ctx); }

const OpDef& op_def_Reshape() {
  static const OpDef def{"Reshape", 2, 2, 1, 1, {attr("allowzero", int64_t{0})}, infer_reshape,
                         compute_reshape};
  return def;
}

}  // namespace mono
