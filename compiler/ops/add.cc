// Add: y = a + b with numpy broadcasting.
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_add(ComputeContext& ctx) {
  binary_numeric(ctx, [](auto a, auto b) { return a + b; });
}

const OpDef& op_def_Add() {
  static const OpDef def{"Add", 2, 2, 1, 1, {}, infer_broadcast_numeric, compute_add};
  return def;
}

}  // namespace mono
