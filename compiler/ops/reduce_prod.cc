// ReduceProd: the product over the given axes (attribute before opset 18, optional input 1 from it);
// absent or empty axes reduce all axes unless noop_with_empty_axes = 1.
#include "compiler/ops/reduce.h"

namespace mono {

static void infer_reduce_prod(InferContext& ctx) { infer_reduce(ctx, {DType::kF32, DType::kF16, DType::kI64, DType::kI32}); }

static void compute_reduce_prod(ComputeContext& ctx) { compute_reduce(ctx, ReduceKind::kProd); }

const OpDef& op_def_ReduceProd() {
  static const OpDef def{
      "ReduceProd",
      1,
      2,
      1,
      1,
      {attr_ints("axes"), attr("keepdims", int64_t{1}), attr("noop_with_empty_axes", int64_t{0})},
      infer_reduce_prod,
      compute_reduce_prod};
  return def;
}

}  // namespace mono
