// LogSoftmax: x - max - log(sum(exp(x - max))) along the softmax axis (the axis rule of
// Softmax, softmax.h: from opset 13 along `axis`, default -1; before, over the 2-D coercion
// at `axis`, default 1). Code generation sees it decomposed (passes/decompose.cc).
#include <cmath>
#include <limits>

#include "compiler/ops/elementwise.h"
#include "compiler/ops/softmax.h"

namespace mono {

static void infer_log_softmax(InferContext& ctx) {
  ctx.expect_float(0);
  softmax_layout(ctx.node());  // checks the axis
  ctx.set_output(0, ctx.input(0));
}

static void compute_log_softmax(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const SoftmaxLayout l = softmax_layout(ctx.node());
  visit_float(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data<T>();
    T* out = y.mutable_data<T>();
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t j = 0; j < l.inner; ++j) {
        auto at = [&](int64_t i) { return (o * l.n + i) * l.inner + j; };
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t i = 0; i < l.n; ++i) m = std::fmax(m, load(in[at(i)]));
        float sum = 0.0f;
        for (int64_t i = 0; i < l.n; ++i) sum += std::exp(load(in[at(i)]) - m);
        const float log_sum = std::log(sum);
        for (int64_t i = 0; i < l.n; ++i) out[at(i)] = store<T>(load(in[at(i)]) - m - log_sum);
      }
    }
  });
}

const OpDef& op_def_LogSoftmax() {
  static const OpDef def{"LogSoftmax", 1, 1, 1, 1, {attr_optional("axis", AttrType::kInt)}, infer_log_softmax,
                         compute_log_softmax};
  return def;
}

}  // namespace mono
