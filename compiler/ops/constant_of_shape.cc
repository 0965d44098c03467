// ConstantOfShape: a tensor of the shape given by input 0 (1-D i64, known at compile time),
// filled with the one-element tensor attribute `value` (default f32 0).
#include "compiler/ops/shape_util.h"

namespace mono {

static Tensor fill_value(const AttrReader& ctx) {
  if (!ctx.has_attr("value")) return Tensor::scalar_float(0.0f);
  const Tensor& v = ctx.attr_tensor("value");
  if (v.numel() != 1)
    ctx.fail(str_cat("attribute 'value' must hold exactly one element, got ", v.type().str()));
  return v;
}

static Shape output_shape(const AttrReader& ctx, const Tensor& shape_tensor) {
  if (shape_tensor.rank() != 1)
    ctx.fail(str_cat("input 0 (shape) must be 1-D, got ", shape_tensor.type().str()));
  Shape shape = int_values(ctx, shape_tensor, "input 0 (shape)");
  for (int64_t d : shape)
    if (d < 0) ctx.fail(str_cat("shape ", shape_str(shape), " has a negative dimension"));
  return shape;
}

static void infer_constant_of_shape(InferContext& ctx) {
  Shape shape = output_shape(ctx, ctx.require_known(0, "shape"));
  ctx.set_output(0, fill_value(ctx).dtype(), shape);
}

static void compute_constant_of_shape(ComputeContext& ctx) {
  Tensor v = fill_value(ctx);
  Tensor& y = ctx.output(0);
  const size_t es = dtype_size(v.dtype());
  const uint8_t* src = bytes_of(v);
  uint8_t* dst = mutable_bytes_of(y);
  for (int64_t i = 0, n = y.numel(); i < n; ++i) std::memcpy(dst + i * es, src, es);
}

const OpDef& op_def_ConstantOfShape() {
  static const OpDef def{"ConstantOfShape", 1, 1, 1, 1,
                         {attr_optional("value", AttrType::kTensor)},
                         infer_constant_of_shape, compute_constant_of_shape};
  return def;
}

}  // namespace mono
