// Identity: y = x.
#include "compiler/ops/shape_util.h"

namespace mono {

static void infer_identity(InferContext& ctx) { ctx.set_output(0, ctx.input(0)); }

static void compute_identity(ComputeContext& ctx) { forward_input_bytes(ctx); }

const OpDef& op_def_Identity() {
  static const OpDef def{"Identity", 1, 1, 1, 1, {}, infer_identity, compute_identity};
  return def;
}

}  // namespace mono
