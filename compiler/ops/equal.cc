// Equal: y = (a == b) with numpy broadcasting; inputs share a dtype (bool included), the
// output is bool. NaN equals nothing.
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_equal(ComputeContext& ctx) {
  binary_predicate(ctx, [](auto a, auto b) { return a == b; });
}

const OpDef& op_def_Equal() {
  static const OpDef def{"Equal", 2, 2, 1, 1, {}, infer_compare, compute_equal};
  return def;
}

}  // namespace mono
