// Or: logical or of two bool tensors with numpy broadcasting.
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_or(ComputeContext& ctx) {
  binary_predicate(ctx, [](bool a, bool b) { return a || b; });
}

const OpDef& op_def_Or() {
  static const OpDef def{"Or", 2, 2, 1, 1, {}, infer_logical, compute_or};
  return def;
}

}  // namespace mono
