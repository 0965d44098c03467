// Clip: y = min(max(x, lo), hi) elementwise; NaN stays NaN, and lo > hi gives hi everywhere.
//   opset < 11: lo and hi are the float attributes min and max (defaults: the lowest and
//     the largest float); float inputs.
//   opset >= 11: lo and hi are the optional scalar inputs 1 and 2 (absent: no bound), of
//     the input's dtype; integer inputs from opset 12.
#include "compiler/ops/elementwise.h"

namespace mono {

static void infer_clip(InferContext& ctx) {
  if (ctx.opset() < 11) {
    if (ctx.num_inputs() > 1)
      ctx.fail("before opset 11, Clip takes min and max as attributes, not inputs");
    ctx.expect_float(0);
  } else {
    for (const char* name : {"min", "max"}) {
      if (ctx.has_attr(name))
        ctx.fail(str_cat("attribute '", name, "' was replaced by an input in opset 11"));
    }
    if (ctx.opset() < 12) ctx.expect_float(0);
    else expect_numeric(ctx, 0);
    for (int i = 1; i < 3; ++i) {
      if (!ctx.has_input(i)) continue;
      ctx.expect_same_dtype(0, i);
      if (ctx.input(i).numel() != 1)
        ctx.fail(str_cat(i == 1 ? "min" : "max", " must be a scalar, got ", ctx.input(i).str()));
    }
  }
  ctx.set_output(0, ctx.input(0));
}

static void compute_clip(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    if constexpr (std::is_same_v<T, uint8_t>) {
      MONO_CHECK(false, "Clip on bool");
    } else {
      C lo, hi;
      if (ctx.opset() < 11) {
        lo = ctx.has_attr("min") ? ctx.attr_float("min") : std::numeric_limits<float>::lowest();
        hi = ctx.has_attr("max") ? ctx.attr_float("max") : std::numeric_limits<float>::max();
      } else {
        if constexpr (std::is_floating_point_v<C>) {
          lo = -std::numeric_limits<C>::infinity();
          hi = std::numeric_limits<C>::infinity();
        } else {
          lo = std::numeric_limits<C>::lowest();
          hi = std::numeric_limits<C>::max();
        }
        if (ctx.has_input(1)) lo = load(ctx.input(1).data<T>()[0]);
        if (ctx.has_input(2)) hi = load(ctx.input(2).data<T>()[0]);
      }
      const T* in = x.data<T>();
      T* out = y.mutable_data<T>();
      for (int64_t i = 0, n = x.numel(); i < n; ++i) {
        C v = load(in[i]);
        v = v < lo ? lo : v;
        out[i] = store<T>(v > hi ? hi : v);
      }
    }
  });
}

const OpDef& op_def_Clip() {
  static const OpDef def{"Clip",
                         1,
                         3,
                         1,
                         1,
                         {attr_optional("min", AttrType::kFloat),
                          attr_optional("max", AttrType::kFloat)},
                         infer_clip,
                         compute_clip};
  return def;
}

}  // namespace mono
