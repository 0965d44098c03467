// ReduceLogSumExp: log(sum(e^x)), computed as max + log(sum(e^(x - max))) over the given axes (attribute before opset 18, optional input 1 from it);
// absent or empty axes reduce all axes unless noop_with_empty_axes = 1.
#include "compiler/ops/reduce.h"

namespace mono {

static void infer_reduce_log_sum_exp(InferContext& ctx) { infer_reduce(ctx, {DType::kF32, DType::kF16}); }

static void compute_reduce_log_sum_exp(ComputeContext& ctx) { compute_reduce(ctx, ReduceKind::kLogSumExp); }

const OpDef& op_def_ReduceLogSumExp() {
  static const OpDef def{
      "ReduceLogSumExp",
      1,
      2,
      1,
      1,
      {attr_ints("axes"), attr("keepdims", int64_t{1}), attr("noop_with_empty_axes", int64_t{0})},
      infer_reduce_log_sum_exp,
      compute_reduce_log_sum_exp};
  return def;
}

}  // namespace mono
