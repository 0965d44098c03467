// ReduceSumSquare: the sum of squares over the given axes (attribute before opset 18, optional input 1 from it);
// absent or empty axes reduce all axes unless noop_with_empty_axes = 1.
#include "compiler/ops/reduce.h"

namespace mono {

static void infer_reduce_sum_square(InferContext& ctx) { infer_reduce(ctx, {DType::kF32, DType::kF16, DType::kI64, DType::kI32}); }

static void compute_reduce_sum_square(ComputeContext& ctx) { compute_reduce(ctx, ReduceKind::kSumSquare); }

const OpDef& op_def_ReduceSumSquare() {
  static const OpDef def{
      "ReduceSumSquare",
      1,
      2,
      1,
      1,
      {attr_ints("axes"), attr("keepdims", int64_t{1}), attr("noop_with_empty_axes", int64_t{0})},
      infer_reduce_sum_square,
      compute_reduce_sum_square};
  return def;
}

}  // namespace mono
