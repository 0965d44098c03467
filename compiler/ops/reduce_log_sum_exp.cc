// ReduceLogSumExp: log(sum(e^x)), computed as max + log(sum(e^(x - max))) (axes an attribute before opset 18, input 1 from it) over the given axes;
// absent or empty axes reduce all axes unless noop_with_empty_axes = 1 (reduce.h).
#include "compiler/ops/reduce.h"

namespace mono {

const OpDef& op_def_ReduceLogSumExp() {
  static const OpDef def = reduce_op_def<ReduceKind::kLogSumExp, true>("ReduceLogSumExp");
  return def;
}

}  // namespace mono
