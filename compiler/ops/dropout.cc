// Dropout in inference: output = data. Opsets 7..11 take the attribute ratio; from opset 12
// ratio and training_mode are optional inputs, and training mode is not supported. The
// optional mask is all true: bool from opset 10, the data's dtype (ones) before.
#include <algorithm>

#include "compiler/ops/shape_util.h"

namespace mono {

static void check_not_training(const AttrReader& ctx, const Tensor* mode) {
  if (!mode) return;
  if (mode->numel() != 1)
    ctx.fail(str_cat("input 2 (training_mode) must be a scalar, got ", mode->type().str()));
  if (mode->as_double(0) != 0) ctx.fail("training mode is not supported");
}

static DType mask_dtype(const AttrReader& ctx, DType data) {
  return ctx.opset() >= 10 ? DType::kBool : data;
}

static void infer_dropout(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  if (ctx.opset() >= 12 && ctx.has_input(2)) {
    ctx.expect_dtype(2, {DType::kBool});
    check_not_training(ctx, ctx.known(2));
  }
  ctx.set_output(0, in);
  ctx.set_output(1, mask_dtype(ctx, in.dtype), in.shape);
}

static void compute_dropout(ComputeContext& ctx) {
  if (ctx.opset() >= 12 && ctx.has_input(2)) check_not_training(ctx, &ctx.input(2));
  if (ctx.has_output(1)) {
    Tensor& mask = ctx.output(1);
    const int64_t n = mask.numel();
    switch (mask.dtype()) {
      case DType::kBool: std::memset(mask.mutable_raw(), 1, static_cast<size_t>(n)); break;
      case DType::kF32: std::fill_n(mask.mutable_data<float>(), n, 1.0f); break;
      case DType::kF16: std::fill_n(mask.mutable_data<Half>(), n, float_to_half(1.0f)); break;
      case DType::kI64: std::fill_n(mask.mutable_data<int64_t>(), n, int64_t{1}); break;
      case DType::kI32: std::fill_n(mask.mutable_data<int32_t>(), n, int32_t{1}); break;
    }
  }
  if (ctx.has_output(0)) forward_input_bytes(ctx);
}

const OpDef& op_def_Dropout() {
  static const OpDef def{"Dropout", 1, 3, 1, 2,
                         {attr("ratio", 0.5f), attr("is_test", int64_t{0}),
                          attr_optional("seed", AttrType::kInt)},
                         infer_dropout, compute_dropout};
  return def;
}

}  // namespace mono
