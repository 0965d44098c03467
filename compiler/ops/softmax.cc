// Softmax: exp(x - max) / sum(exp(x - max)). From opset 13 it runs along `axis` (default -1);
// before, the input is coerced to 2-D [prod(dims < axis), prod(dims >= axis)] (axis default
// 1) and it runs over the second dimension.
#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/ops/softmax.h"

#include "compiler/ops/linalg.h"
#include "compiler/ops/reduce.h"

namespace mono {

namespace {

// The softmax as `outer` blocks of n x inner elements, normalized over n.
bool softmax_layout(const AttrReader& ctx, const Shape& shape, int64_t* outer, int64_t* n,
                    int64_t* inner, std::string* err) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  const bool coerce = ctx.opset() < 13;
  int64_t axis = ctx.has_attr("axis") ? ctx.attr_int("axis") : coerce ? 1 : -1;
  if (coerce) {
    // The coerced form also accepts axis = rank (a single-column 2-D view).
    if (axis < -rank || axis > rank) {
      *err = str_cat("axis ", axis, " is out of range for rank ", rank);
      return false;
    }
    if (axis < 0) axis += rank;
    *outer = shape_numel(Shape(shape.begin(), shape.begin() + axis));
    *n = shape_numel(Shape(shape.begin() + axis, shape.end()));
    *inner = 1;
    return true;
  }
  if (!normalize_axis(axis, rank, &axis)) {
    *err = str_cat("axis ", axis, " is out of range for rank ", rank);
    return false;
  }
  split_at_axis(shape, axis, outer, n, inner);
  return true;
}

void infer_softmax(InferContext& ctx) {
  ctx.expect_float(0);
  int64_t outer, n, inner;
  std::string err;
  if (!softmax_layout(ctx, ctx.input_shape(0), &outer, &n, &inner, &err)) ctx.fail(err);
  ctx.set_output(0, ctx.input(0));
}

void compute_softmax(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  int64_t outer, n, inner;
  std::string err;
  if (!softmax_layout(ctx, x.shape(), &outer, &n, &inner, &err)) ctx.fail(err);
  if (x.numel() == 0) return;
  FloatView xv(x);
  FloatOut out(y);
  if (inner == 1) {
    for (int64_t o = 0; o < outer; ++o) {
      const float* src = xv.data() + o * n;
      float* dst = out.data() + o * n;
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t i = 0; i < n; ++i) m = std::max(m, src[i]);
      float sum = 0.0f;
      for (int64_t i = 0; i < n; ++i) {
        dst[i] = std::exp(src[i] - m);
        sum += dst[i];
      }
      const float inv = 1.0f / sum;
      for (int64_t i = 0; i < n; ++i) dst[i] *= inv;
    }
  } else {
    std::vector<float> m(static_cast<size_t>(inner)), sum(static_cast<size_t>(inner));
    for (int64_t o = 0; o < outer; ++o) {
      const float* src = xv.data() + o * n * inner;
      float* dst = out.data() + o * n * inner;
      std::fill(m.begin(), m.end(), -std::numeric_limits<float>::infinity());
      std::fill(sum.begin(), sum.end(), 0.0f);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < inner; ++j) m[j] = std::max(m[j], src[i * inner + j]);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < inner; ++j) {
          const float e = std::exp(src[i * inner + j] - m[j]);
          dst[i * inner + j] = e;
          sum[j] += e;
        }
      }
      for (int64_t j = 0; j < inner; ++j) sum[j] = 1.0f / sum[j];
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < inner; ++j) dst[i * inner + j] *= sum[j];
    }
  }
  out.finish();
}

}  // namespace

SoftmaxLayout softmax_layout(const Node& node) {
  const AttrReader attrs = node_attrs(node);
  SoftmaxLayout l;
  std::string err;
  if (!softmax_layout(attrs, node.inputs[0]->type.shape, &l.outer, &l.n, &l.inner, &err)) attrs.fail(err);
  return l;
}

int64_t softmax_axis(const Node& node) {
  const AttrReader attrs = node_attrs(node);
  const int64_t rank = node.inputs[0]->type.rank();
  int64_t axis = attrs.has_attr("axis") ? attrs.attr_int("axis") : node.opset < 13 ? 1 : -1;
  if (!normalize_axis(axis, rank, &axis)) attrs.fail(str_cat("axis ", axis, " is out of range for rank ", rank));
  return axis;
}

const OpDef& op_def_Softmax() {
  static const OpDef def{
      "Softmax",      1, 1, 1, 1, {attr_optional("axis", AttrType::kInt)}, infer_softmax,
      compute_softmax};
  return def;
}

}  // namespace mono
