// ReduceL2: the square root of the sum of squares over the given axes (attribute before opset 18, optional input 1 from it);
// absent or empty axes reduce all axes unless noop_with_empty_axes = 1.
#include "compiler/ops/reduce.h"

namespace mono {

static void infer_reduce_l2(InferContext& ctx) { infer_reduce(ctx, {DType::kF32, DType::kF16}); }

static void compute_reduce_l2(ComputeContext& ctx) { compute_reduce(ctx, ReduceKind::kL2); }

const OpDef& op_def_ReduceL2() {
  static const OpDef def{
      "ReduceL2",
      1,
      2,
      1,
      1,
      {attr_ints("axes"), attr("keepdims", int64_t{1}), attr("noop_with_empty_axes", int64_t{0})},
      infer_reduce_l2,
      compute_reduce_l2};
  return def;
}

}  // namespace mono
