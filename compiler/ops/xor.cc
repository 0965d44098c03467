// Xor: logical exclusive or of two bool tensors with numpy broadcasting.
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_xor(ComputeContext& ctx) {
  binary_predicate(ctx, [](bool a, bool b) { return a != b; });
}

const OpDef& op_def_Xor() {
  static const OpDef def{"Xor", 2, 2, 1, 1, {}, infer_logical, compute_xor};
  return def;
}

}  // namespace mono
