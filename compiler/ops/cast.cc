// Cast: converts to the dtype `to` (an ONNX TensorProto data type number).
//   float -> integer truncates toward zero, saturating at the integer's limits; NaN -> 0.
//   integer -> narrower integer wraps (two's complement); anything -> bool is x != 0.
//   `saturate` (opset 19) only concerns float8 types, which Mono does not support.
#include <cstring>

#include "compiler/ops/elementwise.h"

namespace mono {

static DType target_dtype(const AttrReader& ctx) {
  const int64_t to = ctx.attr_int("to");
  DType out;
  if (to < 0 || to > 1000 || !dtype_from_onnx(static_cast<int>(to), &out))
    ctx.fail(str_cat("cannot cast to ", onnx_dtype_name(static_cast<int>(to)), " (", to,
                     "): Mono supports FLOAT, FLOAT16, INT64, INT32 and BOOL"));
  return out;
}

static void infer_cast(InferContext& ctx) {
  ctx.set_output(0, target_dtype(ctx), ctx.input_shape(0));
}

// One value, loaded in its compute type C (float, int64_t or bool), converted to storage D.
template <typename D, typename C>
static inline D convert(C v) {
  if constexpr (std::is_same_v<D, uint8_t>) {
    return v != 0 ? 1 : 0;
  } else if constexpr (std::is_integral_v<D>) {
    if constexpr (std::is_floating_point_v<C>) return float_to_int<D>(v);
    else return static_cast<D>(v);
  } else {
    return store<D>(static_cast<float>(v));
  }
}

static void compute_cast(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (x.dtype() == y.dtype()) {
    if (x.numel() > 0) std::memcpy(y.mutable_raw(), x.raw(), x.nbytes());
    return;
  }
  visit_dtype(x.dtype(), [&](auto src_tag) {
    using S = decltype(src_tag);
    visit_dtype(y.dtype(), [&](auto dst_tag) {
      using D = decltype(dst_tag);
      const S* in = x.data<S>();
      D* out = y.mutable_data<D>();
      for (int64_t i = 0, n = x.numel(); i < n; ++i) out[i] = convert<D>(load(in[i]));
    });
  });
}

const OpDef& op_def_Cast() {
  static const OpDef def{"Cast", 1, 1, 1, 1,
                         {attr_required("to", AttrType::kInt), attr("saturate", int64_t{1})},
                         infer_cast, compute_cast};
  return def;
}

}  // namespace mono
