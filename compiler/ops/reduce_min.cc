// ReduceMin: the minimum (NaN wins) (axes an attribute before opset 18, input 1 from it) over the given axes;
// absent or empty axes reduce all axes unless noop_with_empty_axes = 1 (reduce.h).
#include "compiler/ops/reduce.h"

namespace mono {

const OpDef& op_def_ReduceMin() {
  static const OpDef def = reduce_op_def<ReduceKind::kMin, false>("ReduceMin");
  return def;
}

}  // namespace mono
