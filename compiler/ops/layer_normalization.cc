// LayerNormalization: normalizes X over the axes [axis, rank): Y = (X - mean) * InvStdDev *
// Scale + B with InvStdDev = 1 / sqrt(var + epsilon). Optional outputs Mean and InvStdDev
// have X's shape with the normalized axes set to 1. Statistics compute in float
// (stash_type 1); Scale and B broadcast to the normalized shape.
#include "compiler/ops/layer_normalization.h"

#include <cmath>

#include "compiler/ops/elementwise.h"
#include "compiler/ops/linalg.h"

namespace mono {

namespace {

// The statistics outputs' dtype for stash_type.
DType stash_dtype(const AttrReader& ctx, DType x) {
  const int64_t stash = ctx.attr_int("stash_type");
  if (stash == 1) return DType::kF32;
  DType t;
  if (dtype_from_onnx(static_cast<int>(stash), &t) && t == x) return t;
  ctx.fail(str_cat("unsupported stash_type ", stash, " (Mono computes statistics in float)"));
}

void check_affine(InferContext& ctx, int i, const Shape& norm, const char* name) {
  ctx.expect_float(i);
  const Shape& s = ctx.input_shape(i);
  Shape out;
  // Leading axes beyond the normalized ones must be 1.
  size_t extra = s.size() > norm.size() ? s.size() - norm.size() : 0;
  bool ok = true;
  for (size_t k = 0; k < extra; ++k) ok = ok && s[k] == 1;
  Shape tail(s.begin() + extra, s.end());
  if (!ok || !broadcast_shapes({&norm, &tail}, &out) || out != norm)
    ctx.fail(str_cat(name, " of shape ", shape_str(s),
                     " does not broadcast to the normalized shape ", shape_str(norm)));
}

void infer_layer_normalization(InferContext& ctx) {
  ctx.expect_float(0);
  const Shape& x = ctx.input_shape(0);
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank == 0) ctx.fail("X must have rank >= 1");
  const int64_t axis = ctx.axis(ctx.attr_int("axis"), rank);
  const Shape norm(x.begin() + axis, x.end());
  check_affine(ctx, 1, norm, "Scale");
  if (ctx.has_input(2)) check_affine(ctx, 2, norm, "B");
  ctx.set_output(0, ctx.input_dtype(0), x);
  if (ctx.num_outputs() > 1) {
    Shape stat = x;
    for (int64_t i = axis; i < rank; ++i) stat[i] = 1;
    const DType sd = stash_dtype(ctx, ctx.input_dtype(0));
    ctx.set_output(1, sd, stat);
    ctx.set_output(2, sd, stat);
  }
}

// A parameter broadcast over the normalized shape (`inner` values).
std::vector<float> expand_affine(const Tensor& t, const Shape& norm) {
  FloatView v(t);
  std::vector<float> out(static_cast<size_t>(shape_numel(norm)));
  const Shape& s = t.shape();
  Shape tail(s.size() > norm.size() ? s.end() - norm.size() : s.begin(), s.end());
  for_each_broadcast<1>(norm, {&tail},
                        [&](int64_t i, const std::array<int64_t, 1>& o) { out[i] = v[o[0]]; });
  return out;
}

void store_stat(Tensor& t, int64_t i, float v) {
  if (t.dtype() == DType::kF32)
    t.mutable_data<float>()[i] = v;
  else
    t.mutable_data<Half>()[i] = float_to_half(v);
}

void compute_layer_normalization(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const Shape& xs = x.shape();
  int64_t axis = 0;
  normalize_axis(ctx.attr_int("axis"), x.rank(), &axis);
  const Shape norm(xs.begin() + axis, xs.end());
  const int64_t inner = shape_numel(norm);
  const int64_t outer =
      inner ? x.numel() / inner : shape_numel(Shape(xs.begin(), xs.begin() + axis));
  const float eps = ctx.attr_float("epsilon");
  const std::vector<float> scale = expand_affine(ctx.input(1), norm);
  std::vector<float> bias;
  if (ctx.has_input(2)) bias = expand_affine(ctx.input(2), norm);
  Tensor* mean_out = ctx.has_output(1) ? &ctx.output(1) : nullptr;
  Tensor* inv_out = ctx.has_output(2) ? &ctx.output(2) : nullptr;
  FloatView xv(x);
  FloatOut out(y);
  for (int64_t r = 0; r < outer; ++r) {
    const float* src = xv.data() + r * inner;
    float* dst = out.data() + r * inner;
    // The mean of x - x[0], plus x[0]: precise when the mean is far larger than the spread.
    const float shift = inner > 0 ? src[0] : 0.0f;
    float sum = 0.0f;
    for (int64_t i = 0; i < inner; ++i) sum += src[i] - shift;
    const float mean = shift + sum / static_cast<float>(inner);
    float sq = 0.0f;
    for (int64_t i = 0; i < inner; ++i) {
      const float d = src[i] - mean;
      sq += d * d;
    }
    const float inv = 1.0f / std::sqrt(sq / static_cast<float>(inner) + eps);
    if (bias.empty()) {
      for (int64_t i = 0; i < inner; ++i) dst[i] = (src[i] - mean) * inv * scale[i];
    } else {
      for (int64_t i = 0; i < inner; ++i) dst[i] = (src[i] - mean) * inv * scale[i] + bias[i];
    }
    if (mean_out) store_stat(*mean_out, r, mean);
    if (inv_out) store_stat(*inv_out, r, inv);
  }
  out.finish();
}

}  // namespace

int64_t layer_norm_axis(const Node& node) {
  const AttrReader attrs = node_attrs(node);
  int64_t axis = 0;
  if (!normalize_axis(attrs.attr_int("axis"), node.inputs[0]->type.rank(), &axis))
    attrs.fail(str_cat("axis ", attrs.attr_int("axis"), " is out of range"));
  return axis;
}

int64_t layer_norm_row_length(const Node& node) {
  const Shape& x = node.inputs[0]->type.shape;
  return shape_numel(Shape(x.begin() + layer_norm_axis(node), x.end()));
}

const OpDef& op_def_LayerNormalization() {
  static const OpDef def{
      "LayerNormalization",
      2,
      3,
      1,
      3,
      {attr("axis", int64_t{-1}), attr("epsilon", 1e-5f), attr("stash_type", int64_t{1})},
      infer_layer_normalization,
      compute_layer_normalization};
  return def;
}

}  // namespace mono
