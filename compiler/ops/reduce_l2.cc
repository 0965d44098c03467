// ReduceL2: the square root of the sum of squares (axes an attribute before opset 18, input 1 from it) over the given axes;
// absent or empty axes reduce all axes unless noop_with_empty_axes = 1 (reduce.h).
#include "compiler/ops/reduce.h"

namespace mono {

const OpDef& op_def_ReduceL2() {
  static const OpDef def = reduce_op_def<ReduceKind::kL2, true>("ReduceL2");
  return def;
}

}  // namespace mono
