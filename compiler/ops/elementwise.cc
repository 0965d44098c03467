#include "compiler/ops/elementwise.h"

namespace mono {

bool broadcast_shapes(const std::vector<const Shape*>& shapes, Shape* out) {
  size_t rank = 0;
  for (const Shape* s : shapes) rank = std::max(rank, s->size());
  Shape result(rank, 1);
  for (const Shape* s : shapes) {
    size_t offset = rank - s->size();
    for (size_t i = 0; i < s->size(); ++i) {
      int64_t d = (*s)[i];
      int64_t& r = result[offset + i];
      if (d == r || d == 1) continue;
      if (r == 1) {
        r = d;
        continue;
      }
      return false;
    }
  }
  *out = std::move(result);
  return true;
}

Shape broadcast_inputs(InferContext& ctx) {
  std::vector<const Shape*> shapes;
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) shapes.push_back(&ctx.input_shape(i));
  Shape out;
  if (!broadcast_shapes(shapes, &out)) {
    std::string list;
    for (int i = 0; i < ctx.num_inputs(); ++i)
      if (ctx.has_input(i)) list += str_cat(list.empty() ? "" : ", ", ctx.input(i).str());
    ctx.fail(str_cat("input shapes do not broadcast: ", list));
  }
  return out;
}

void infer_broadcast(InferContext& ctx) {
  for (int i = 1; i < ctx.num_inputs(); ++i) ctx.expect_same_dtype(0, i);
  ctx.set_output(0, ctx.input_dtype(0), broadcast_inputs(ctx));
}

void infer_broadcast_float(InferContext& ctx) {
  ctx.expect_float(0);
  infer_broadcast(ctx);
}

void expect_numeric(InferContext& ctx, int i) {
  ctx.expect_dtype(i, {DType::kF32, DType::kF16, DType::kI64, DType::kI32});
}

void infer_broadcast_numeric(InferContext& ctx) {
  expect_numeric(ctx, 0);
  infer_broadcast(ctx);
}

void infer_compare(InferContext& ctx) {
  ctx.expect_same_dtype(0, 1);
  ctx.set_output(0, DType::kBool, broadcast_inputs(ctx));
}

void infer_logical(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::kBool});
  ctx.expect_dtype(1, {DType::kBool});
  ctx.set_output(0, DType::kBool, broadcast_inputs(ctx));
}

void infer_unary(InferContext& ctx, bool floats_only) {
  if (floats_only) ctx.expect_float(0);
  else ctx.expect_dtype(0, {DType::kF32, DType::kF16, DType::kI64, DType::kI32});
  ctx.set_output(0, ctx.input(0));
}

}  // namespace mono
