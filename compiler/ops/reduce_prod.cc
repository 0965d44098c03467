// ReduceProd: the product (axes an attribute before opset 18, input 1 from it) over the given axes;
// absent or empty axes reduce all axes unless noop_with_empty_axes = 1 (reduce.h).
#include "compiler/ops/reduce.h"

namespace mono {

const OpDef& op_def_ReduceProd() {
  static const OpDef def = reduce_op_def<ReduceKind::kProd, false>("ReduceProd");
  return def;
}

}  // namespace mono
