// Expand: broadcasts the input against the shape given by input 1 (1-D, known at compile
// time) by numpy rules, in both directions: the output has the broadcast of both shapes.
#include "compiler/ops/elementwise.h"
#include "compiler/ops/shape_util.h"

namespace mono {

static void infer_expand(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  const Tensor& shape_t = ctx.require_known(1, "shape");
  if (shape_t.rank() != 1) ctx.fail(str_cat("input 1 (shape) must be 1-D, got ", shape_t.type().str()));
  Shape target = int_values(ctx, shape_t, "input 1 (shape)");
  for (int64_t d : target)
    if (d < 0) ctx.fail(str_cat("shape ", shape_str(target), " has a negative dimension"));
  Shape out;
  if (!broadcast_shapes({&in.shape, &target}, &out))
    ctx.fail(str_cat("cannot expand ", in.str(), " to shape ", shape_str(target),
                     ": the shapes do not broadcast"));
  ctx.set_output(0, in.dtype, out);
}

static void compute_expand(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const size_t es = dtype_size(x.dtype());
  const uint8_t* src = bytes_of(x);
  uint8_t* dst = mutable_bytes_of(y);
  for_each_broadcast<1>(y.shape(), {&x.shape()}, [&](int64_t i, const std::array<int64_t, 1>& o) {
    std::memcpy(dst + i * es, src + o[0] * es, es);
  });
}

const OpDef& op_def_Expand() {
  static const OpDef def{"Expand", 2, 2, 1, 1, {}, infer_expand, compute_expand};
  return def;
}

}  // namespace mono
