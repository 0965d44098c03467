// Mean: elementwise mean of one or more float inputs with numpy broadcasting across all of
// them: their sum, added left to right, divided by their count.
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_mean(ComputeContext& ctx) {
  fold_inputs(ctx, [](auto a, auto b) { return a + b; });
  Tensor& y = ctx.output(0);
  const float count = static_cast<float>(ctx.num_inputs());
  visit_float(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* out = y.mutable_data<T>();
    for (int64_t i = 0, n = y.numel(); i < n; ++i) out[i] = store<T>(load(out[i]) / count);
  });
}

const OpDef& op_def_Mean() {
  static const OpDef def{"Mean", 1, -1, 1, 1, {}, infer_broadcast_float, compute_mean};
  return def;
}

}  // namespace mono
