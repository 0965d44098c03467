// And: logical and of two bool tensors with numpy broadcasting.
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_and(ComputeContext& ctx) {
  binary_predicate(ctx, [](bool a, bool b) { return a && b; });
}

const OpDef& op_def_And() {
  static const OpDef def{"And", 2, 2, 1, 1, {}, infer_logical, compute_and};
  return def;
}

}  // namespace mono
