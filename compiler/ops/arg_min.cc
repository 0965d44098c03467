// ArgMin: the index of the first (or, with select_last_index, the last) min of x along
// axis (arg_extremum.h).
#include "compiler/ops/arg_extremum.h"

namespace mono {

static void compute_arg_min(ComputeContext& ctx) { compute_arg_extremum(ctx, false); }

const OpDef& op_def_ArgMin() {
  static const OpDef def{"ArgMin",
                         1,
                         1,
                         1,
                         1,
                         {attr("axis", int64_t{0}), attr("keepdims", int64_t{1}), attr("select_last_index", int64_t{0})},
                         infer_arg_extremum,
                         compute_arg_min};
  return def;
}

}  // namespace mono
