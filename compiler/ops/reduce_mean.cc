// ReduceMean: the mean over the given axes (attribute before opset 18, optional input 1
// from it); absent or empty axes reduce all axes unless noop_with_empty_axes = 1.
#include "compiler/ops/reduce.h"

namespace mono {

static void infer_reduce_mean(InferContext& ctx) {
  infer_reduce(ctx, {DType::kF32, DType::kF16, DType::kI64, DType::kI32});
}

static void compute_reduce_mean(ComputeContext& ctx) { compute_reduce(ctx, ReduceKind::kMean); }

const OpDef& op_def_ReduceMean() {
  static const OpDef def{
      "ReduceMean",
      1,
      2,
      1,
      1,
      {attr_ints("axes"), attr("keepdims", int64_t{1}), attr("noop_with_empty_axes", int64_t{0})},
      infer_reduce_mean,
      compute_reduce_mean};
  return def;
}

}  // namespace mono
