// Trilu: the upper (upper = 1, the default) or lower triangle of the matrices in the last two
// axes of x; elements outside it become 0. Element (i, j) is kept when j - i >= k (upper) or
// j - i <= k (lower); k is the optional scalar input 1 (default 0), known at compile time.
#include "compiler/ops/elementwise.h"
#include "compiler/ops/shape_util.h"
#include "compiler/ops/trilu.h"

namespace mono {

int64_t trilu_k(const AttrReader& ctx, const Tensor* k) { return k ? int_scalar(ctx, *k, "k (input 1)") : 0; }

static void infer_trilu(InferContext& ctx) {
  if (ctx.input(0).rank() < 2) ctx.fail(str_cat("input must have rank >= 2, got ", ctx.input(0).str()));
  if (ctx.has_input(1)) trilu_k(ctx, &ctx.require_known(1, "k"));
  ctx.set_output(0, ctx.input(0));
}

static void compute_trilu(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t k = trilu_k(ctx, ctx.has_input(1) ? &ctx.input(1) : nullptr);
  const bool upper = ctx.attr_int("upper") != 0;
  const int64_t rows = x.shape()[x.rank() - 2], cols = x.shape()[x.rank() - 1];
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data<T>();
    T* out = y.mutable_data<T>();
    for (int64_t e = 0, n = x.numel(); e < n; ++e) {
      const int64_t j = e % cols, i = (e / cols) % rows;
      const bool keep = upper ? j - i >= k : j - i <= k;
      out[e] = keep ? in[e] : T{};
    }
  });
}

const OpDef& op_def_Trilu() {
  static const OpDef def{"Trilu", 1, 2, 1, 1, {attr("upper", int64_t{1})}, infer_trilu, compute_trilu};
  return def;
}

}  // namespace mono
