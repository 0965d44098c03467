// Slice: takes [start, end) with a step along some axes. Before opset 10 starts, ends and
// axes are attributes; from opset 10 they are inputs (starts, ends, optional axes and steps;
// i64 or i32, known at compile time). Negative starts and ends count from the end, then
// are clamped as ONNX specifies (to [0, dim] for positive steps, [-1, dim-1] for negative).
#include <limits>

#include "compiler/ops/shape_util.h"

namespace mono {

struct SliceParams {
  std::vector<int64_t> starts, ends, axes, steps;
  bool have_axes = false, have_steps = false;
};

struct SlicePlan {
  std::vector<int64_t> start, step, count;  // per input axis
};

static SlicePlan plan_slice(const AttrReader& ctx, const Shape& in, const SliceParams& p) {
  const int64_t rank = static_cast<int64_t>(in.size());
  const size_t n = p.starts.size();
  if (p.ends.size() != n)
    ctx.fail(str_cat("starts has ", n, " entries but ends has ", p.ends.size()));
  if (p.have_axes && p.axes.size() != n)
    ctx.fail(str_cat("starts has ", n, " entries but axes has ", p.axes.size()));
  if (p.have_steps && p.steps.size() != n)
    ctx.fail(str_cat("starts has ", n, " entries but steps has ", p.steps.size()));
  std::vector<int64_t> axes;
  if (p.have_axes) {
    axes = checked_axes(ctx, p.axes, rank);
  } else {
    if (static_cast<int64_t>(n) > rank)
      ctx.fail(str_cat("starts has ", n, " entries for an input of rank ", rank));
    for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  SlicePlan plan;
  plan.start.assign(rank, 0);
  plan.step.assign(rank, 1);
  plan.count = in;
  for (size_t i = 0; i < n; ++i) {
    const int64_t ax = axes[i];
    const int64_t dim = in[ax];
    const int64_t step = p.have_steps ? p.steps[i] : 1;
    if (step == 0) ctx.fail(str_cat("step for axis ", ax, " is 0"));
    int64_t start = p.starts[i], end = p.ends[i];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    int64_t range;  // elements between start and end in the direction of the step
    if (step > 0) {
      start = start < 0 ? 0 : start > dim ? dim : start;
      end = end < 0 ? 0 : end > dim ? dim : end;
      range = end - start;
    } else {
      start = start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
      end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
      range = start - end;
    }
    const uint64_t mag = step > 0 ? static_cast<uint64_t>(step) : uint64_t{0} - static_cast<uint64_t>(step);
    const int64_t count =
        dim <= 0 || range <= 0 ? 0 : static_cast<int64_t>(1 + static_cast<uint64_t>(range - 1) / mag);
    plan.start[ax] = count > 0 ? start : 0;
    plan.step[ax] = count > 1 ? step : 1;
    plan.count[ax] = count;
  }
  return plan;
}

static std::vector<int64_t> required_ints_attr(const AttrReader& ctx, const char* key) {
  if (!ctx.has_attr(key)) ctx.fail(str_cat("attribute '", key, "' is required before opset 10"));
  return ctx.attr_ints(key);
}

static SliceParams attr_params(const AttrReader& ctx) {
  SliceParams p;
  p.starts = required_ints_attr(ctx, "starts");
  p.ends = required_ints_attr(ctx, "ends");
  p.have_axes = ctx.has_attr("axes");
  p.axes = ctx.attr_ints("axes");
  return p;
}

static void check_1d(const AttrReader& ctx, const TensorType& t, const char* what) {
  if (t.rank() != 1) ctx.fail(str_cat(what, " must be 1-D, got ", t.str()));
}

static void infer_slice(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  SliceParams p;
  if (ctx.opset() < 10) {
    p = attr_params(ctx);
  } else {
    if (!ctx.has_input(1) || !ctx.has_input(2)) ctx.fail("inputs starts and ends are required");
    static const char* const kWhat[] = {"", "starts", "ends", "axes", "steps"};
    for (int i = 1; i <= 4; ++i)
      if (ctx.has_input(i)) check_1d(ctx, ctx.input(i), kWhat[i]);
    p.starts = known_ints(ctx, 1, "starts");
    p.ends = known_ints(ctx, 2, "ends");
    if ((p.have_axes = ctx.has_input(3))) p.axes = known_ints(ctx, 3, "axes");
    if ((p.have_steps = ctx.has_input(4))) p.steps = known_ints(ctx, 4, "steps");
  }
  ctx.set_output(0, in.dtype, plan_slice(ctx, in.shape, p).count);
}

static void compute_slice(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  SliceParams p;
  if (ctx.opset() < 10) {
    p = attr_params(ctx);
  } else {
    p.starts = int_values(ctx, ctx.input(1), "starts");
    p.ends = int_values(ctx, ctx.input(2), "ends");
    if ((p.have_axes = ctx.has_input(3))) p.axes = int_values(ctx, ctx.input(3), "axes");
    if ((p.have_steps = ctx.has_input(4))) p.steps = int_values(ctx, ctx.input(4), "steps");
  }
  const SlicePlan plan = plan_slice(ctx, x.shape(), p);
  MONO_CHECK(plan.count == y.shape(), "slice shape changed");
  const int64_t rank = x.rank();
  const int64_t total = y.numel();
  if (total == 0) return;
  // Input strides scaled by the steps; the offset of the first element.
  std::vector<int64_t> stride(rank);
  int64_t in_stride = 1, offset = 0;
  for (int64_t ax = rank - 1; ax >= 0; --ax) {
    stride[ax] = in_stride * plan.step[ax];
    offset += in_stride * plan.start[ax];
    in_stride *= x.shape()[ax];
  }
  const size_t es = dtype_size(x.dtype());
  const uint8_t* src = bytes_of(x);
  uint8_t* dst = mutable_bytes_of(y);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < total; ++i) {
    std::memcpy(dst + i * es, src + offset * es, es);
    for (int64_t ax = rank - 1; ax >= 0; --ax) {
      offset += stride[ax];
      if (++idx[ax] < plan.count[ax]) break;
      offset -= stride[ax] * plan.count[ax];
      idx[ax] = 0;
    }
  }
}

const OpDef& op_def_Slice() {
  static const OpDef def{"Slice", 1, 5, 1, 1,
                         {attr_ints("starts"), attr_ints("ends"), attr_ints("axes")},
                         infer_slice, compute_slice};
  return def;
}

}  // namespace mono
