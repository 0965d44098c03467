// ReduceLogSum: the natural log of the sum over the given axes (attribute before opset 18, optional input 1 from it);
// absent or empty axes reduce all axes unless noop_with_empty_axes = 1.
#include "compiler/ops/reduce.h"

namespace mono {

static void infer_reduce_log_sum(InferContext& ctx) { infer_reduce(ctx, {DType::kF32, DType::kF16}); }

static void compute_reduce_log_sum(ComputeContext& ctx) { compute_reduce(ctx, ReduceKind::kLogSum); }

const OpDef& op_def_ReduceLogSum() {
  static const OpDef def{
      "ReduceLogSum",
      1,
      2,
      1,
      1,
      {attr_ints("axes"), attr("keepdims", int64_t{1}), attr("noop_with_empty_axes", int64_t{0})},
      infer_reduce_log_sum,
      compute_reduce_log_sum};
  return def;
}

}  // namespace mono
