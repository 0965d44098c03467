// ReduceMax: the maximum over the given axes (attribute before opset 18, optional input 1
// from it); absent or empty axes reduce all axes unless noop_with_empty_axes = 1.
#include "compiler/ops/reduce.h"

namespace mono {

static void infer_reduce_max(InferContext& ctx) {
  infer_reduce(ctx, {DType::kF32, DType::kF16, DType::kI64, DType::kI32});
}

static void compute_reduce_max(ComputeContext& ctx) { compute_reduce(ctx, ReduceKind::kMax); }

const OpDef& op_def_ReduceMax() {
  static const OpDef def{
      "ReduceMax",
      1,
      2,
      1,
      1,
      {attr_ints("axes"), attr("keepdims", int64_t{1}), attr("noop_with_empty_axes", int64_t{0})},
      infer_reduce_max,
      compute_reduce_max};
  return def;
}

}  // namespace mono
