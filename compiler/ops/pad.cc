// Pad: x padded (or cropped, with negative pads) along each axis. Modes: constant (the fill
// value, 0 by default), reflect (mirrored without repeating the edge), edge (the edge value
// repeated), wrap (opset 19: periodic).
#include "compiler/ops/pad.h"

#include <cstring>

#include "compiler/ops/shape_util.h"

namespace mono {

PadSpec pad_spec(const AttrReader& ctx, const Shape& in, const Tensor* pads, const Tensor* value, const Tensor* axes) {
  PadSpec s;
  const std::string mode = ctx.attr_string("mode");
  if (mode == "constant") s.mode = PadMode::kConstant;
  else if (mode == "reflect") s.mode = PadMode::kReflect;
  else if (mode == "edge") s.mode = PadMode::kEdge;
  else if (mode == "wrap" && ctx.opset() >= 19) s.mode = PadMode::kWrap;
  else ctx.fail(str_cat("mode '", mode, "' is not one of constant, reflect, edge", ctx.opset() >= 19 ? ", wrap" : ""));
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> p;
  if (ctx.opset() < 11) {
    p = ctx.attr_ints("pads");
    s.value = ctx.attr_float("value");
  } else {
    if (!pads) ctx.fail("pads (input 1) is required");
    p = int_values(ctx, *pads, "pads (input 1)");
    if (value) {
      if (value->numel() != 1) ctx.fail(str_cat("constant_value (input 2) must be a scalar, got ", value->type().str()));
      s.value = value->as_double(0);
    }
  }
  std::vector<int64_t> ax;
  if (axes) {
    ax = checked_axes(ctx, int_values(ctx, *axes, "axes (input 3)"), rank, "axes (input 3)");
  } else {
    for (int64_t d = 0; d < rank; ++d) ax.push_back(d);
  }
  const int64_t na = static_cast<int64_t>(ax.size());
  if (static_cast<int64_t>(p.size()) != 2 * na)
    ctx.fail(str_cat("pads has ", p.size(), " values; expected ", 2 * na, " (begin and end for ", na, " axes)"));
  s.begin.assign(rank, 0);
  s.end.assign(rank, 0);
  for (int64_t i = 0; i < na; ++i) {
    s.begin[ax[i]] = p[i];
    s.end[ax[i]] = p[i + na];
  }
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t n = in[d], o = n + s.begin[d] + s.end[d];
    if (o < 0) ctx.fail(str_cat("pads crop axis ", d, " of extent ", n, " below 0"));
    if (s.mode != PadMode::kConstant && o > 0 && n == 0) ctx.fail(str_cat("cannot ", mode, "-pad the empty axis ", d));
    if (s.mode == PadMode::kReflect && (s.begin[d] >= n || s.end[d] >= n) && (s.begin[d] > 0 || s.end[d] > 0))
      ctx.fail(str_cat("reflect pads of axis ", d, " must be smaller than its extent ", n));
    s.out_shape.push_back(o);
  }
  return s;
}

int64_t pad_source(PadMode mode, int64_t o, int64_t begin, int64_t n) {
  int64_t i = o - begin;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return i < 0 ? 0 : n - 1;
    case PadMode::kWrap: return ((i % n) + n) % n;
    case PadMode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      i = ((i % period) + period) % period;
      return i < n ? i : period - i;
    }
  }
  return -1;
}

static PadSpec spec_of(InferContext& ctx) {
  const Tensor* pads = ctx.has_input(1) ? &ctx.require_known(1, "pads") : nullptr;
  const Tensor* axes = ctx.has_input(3) ? &ctx.require_known(3, "axes") : nullptr;
  return pad_spec(ctx, ctx.input_shape(0), pads, ctx.has_input(2) ? ctx.known(2) : nullptr, axes);
}

static void infer_pad(InferContext& ctx) {
  if (ctx.has_input(2)) ctx.expect_same_dtype(0, 2);
  ctx.set_output(0, ctx.input_dtype(0), spec_of(ctx).out_shape);
}

static void compute_pad(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const PadSpec s = pad_spec(ctx, x.shape(), ctx.has_input(1) ? &ctx.input(1) : nullptr,
                             ctx.has_input(2) ? &ctx.input(2) : nullptr, ctx.has_input(3) ? &ctx.input(3) : nullptr);
  const Shape& xs = x.shape();
  const Shape& ys = y.shape();
  const size_t es = dtype_size(x.dtype()), r = xs.size();
  Tensor fill = Tensor::from_floats({}, {static_cast<float>(s.value)}).cast(x.dtype());
  if (!is_float(x.dtype())) fill = Tensor::from_ints({}, {static_cast<int64_t>(s.value)}).cast(x.dtype());
  const uint8_t* in = bytes_of(x);
  uint8_t* out = mutable_bytes_of(y);
  std::vector<int64_t> idx(r, 0);
  for (int64_t e = 0, n = y.numel(); e < n; ++e) {
    int64_t src = 0;
    for (size_t d = 0; d < r && src >= 0; ++d) {
      const int64_t i = pad_source(s.mode, idx[d], s.begin[d], xs[d]);
      src = i < 0 ? -1 : src * xs[d] + i;
    }
    std::memcpy(out + e * es, src < 0 ? bytes_of(fill) : in + src * es, es);
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < ys[d]) break;
      idx[d] = 0;
    }
  }
}

const OpDef& op_def_Pad() {
  static const OpDef def{"Pad",
                         1,
                         4,
                         1,
                         1,
                         {attr("mode", "constant"), attr_ints("pads"), attr("value", 0.0f)},
                         infer_pad,
                         compute_pad};
  return def;
}

}  // namespace mono
