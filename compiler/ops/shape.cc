// Shape: the input's dimensions as a 1-D i64 tensor, optionally the slice [start, end) of
// them (opset 15; negative values count from the end, both clamped to [0, rank]).
#include "compiler/ops/shape_util.h"

namespace mono {

static void shape_range(const AttrReader& ctx, int64_t rank, int64_t* begin, int64_t* end) {
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return v < 0 ? 0 : v > rank ? rank : v;
  };
  *begin = clamp(ctx.attr_int("start"));
  *end = ctx.has_attr("end") ? clamp(ctx.attr_int("end")) : rank;
  if (*end < *begin) *end = *begin;
}

static void infer_shape(InferContext& ctx) {
  int64_t begin, end;
  shape_range(ctx, ctx.input(0).rank(), &begin, &end);
  ctx.set_output(0, DType::kI64, {end - begin});
}

static void compute_shape(ComputeContext& ctx) {
  const Shape& in = ctx.input(0).shape();
  int64_t begin, end;
  shape_range(ctx, static_cast<int64_t>(in.size()), &begin, &end);
  int64_t* out = ctx.output(0).mutable_data<int64_t>();
  for (int64_t i = begin; i < end; ++i) out[i - begin] = in[i];
}

const OpDef& op_def_Shape() {
  static const OpDef def{"Shape", 1, 1, 1, 1,
                         {attr("start", int64_t{0}), attr_optional("end", AttrType::kInt)},
                         infer_shape, compute_shape};
  return def;
}

}  // namespace mono
