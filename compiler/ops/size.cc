// Size: the number of elements of x, an i64 scalar. Shapes are static, so simplification
// (fold_shape_arithmetic) replaces it by a constant before code generation.
#include "compiler/ops/op.h"

namespace mono {

static void infer_size(InferContext& ctx) { ctx.set_output(0, DType::kI64, Shape{}); }

static void compute_size(ComputeContext& ctx) {
  ctx.output(0).mutable_data<int64_t>()[0] = ctx.input(0).numel();
}

const OpDef& op_def_Size() {
  static const OpDef def{"Size", 1, 1, 1, 1, {}, infer_size, compute_size};
  return def;
}

}  // namespace mono
