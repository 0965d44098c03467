// ArgMax and ArgMin: shared shape rule and reference.
#pragma once

#include "compiler/ops/op.h"

namespace mono {

// The index of the maximum (or minimum) along `axis` (default 0) as i64, keepdims (default 1)
// keeping the axis with extent 1. Ties give the first index, or the last with
// select_last_index = 1; NaN counts as the extreme (numpy's argmax), first or last NaN alike.
void infer_arg_extremum(InferContext& ctx);
void compute_arg_extremum(ComputeContext& ctx, bool is_max);

template <bool kIsMax>
OpDef arg_extremum_def(const char* name) {
  return OpDef{name,
               1,
               1,
               1,
               1,
               {attr("axis", int64_t{0}), attr("keepdims", int64_t{1}), attr("select_last_index", int64_t{0})},
               infer_arg_extremum,
               [](ComputeContext& ctx) { compute_arg_extremum(ctx, kIsMax); }};
}

}  // namespace mono
