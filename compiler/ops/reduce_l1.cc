// ReduceL1: the sum of absolute values (axes an attribute before opset 18, input 1 from it) over the given axes;
// absent or empty axes reduce all axes unless noop_with_empty_axes = 1 (reduce.h).
#include "compiler/ops/reduce.h"

namespace mono {

const OpDef& op_def_ReduceL1() {
  static const OpDef def = reduce_op_def<ReduceKind::kL1, false>("ReduceL1");
  return def;
}

}  // namespace mono
