// Resize: each axis of x interpolated from its extent to a new one, given by scales or sizes
// (inputs known at compile time). Modes nearest (four rounding rules), linear and cubic (the
// coefficient A, optional exclusion of taps outside the input); coordinate transformations
// half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric,
// tf_half_pixel_for_nn (opset 11) and tf_crop_and_resize (with its roi and extrapolation value).
// Opsets 11 and later; antialiased downsampling is refused. Code generation sees it decomposed
// into Gathers (passes/decompose.cc).
#include "compiler/ops/resize.h"

#include <cmath>

#include "compiler/ops/linalg.h"
#include "compiler/ops/shape_util.h"

namespace mono {

bool ResizeAxis::identity() const {
  if (in != out || taps != 1) return false;
  for (int64_t o = 0; o < out; ++o)
    if (index[o] != o || weight[o] != 1.0 || outside[o]) return false;
  return true;
}

namespace {

enum class Mode { kNearest, kLinear, kCubic };

struct Rules {
  Mode mode;
  std::string transform, nearest;
  double a;
  bool exclude;
};

// The position in the input that output index o maps to (ONNX's x_original). As in ONNX's
// reference, the resized length is scale x in, which is not a whole number when scales are given
// and do not divide evenly; `out` is the whole output extent.
double source_coordinate(const Rules& r, int64_t o, int64_t in, int64_t out, double scale, double roi0, double roi1) {
  const double x = static_cast<double>(o), length = scale * static_cast<double>(in);
  const std::string& t = r.transform;
  if (t == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (t == "pytorch_half_pixel") return length > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (t == "align_corners") return length == 1 ? 0.0 : x * static_cast<double>(in - 1) / (length - 1);
  if (t == "asymmetric") return x / scale;
  if (t == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (t == "half_pixel_symmetric") {
    const double adjustment = static_cast<double>(out) / length;
    const double center = static_cast<double>(in) / 2;
    return center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
  }
  // tf_crop_and_resize
  const double span = static_cast<double>(in - 1);
  if (length == 1) return (roi1 - roi0) * span / 2 + roi0 * span;
  return x * (roi1 - roi0) * span / (length - 1) + roi0 * span;
}

// The cubic convolution kernel of coefficient a at distance d.
double cubic(double a, double d) {
  d = std::fabs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

ResizeAxis axis_table(const AttrReader& ctx, const Rules& r, int64_t in, int64_t out, double scale, double roi0,
                      double roi1) {
  ResizeAxis ax;
  ax.in = in;
  ax.out = out;
  ax.taps = r.mode == Mode::kNearest ? 1 : r.mode == Mode::kLinear ? 2 : 4;
  ax.outside.assign(out, false);
  if (out > 0 && in == 0) ctx.fail("cannot resize an empty axis to a non-empty one");
  for (int64_t o = 0; o < out; ++o) {
    const double x = source_coordinate(r, o, in, out, scale, roi0, roi1);
    if (!(std::fabs(x) < 1e15)) ctx.fail(str_cat("output index ", o, " maps to the input coordinate ", x, " (roi?)"));
    if (r.transform == "tf_crop_and_resize" && (x < 0 || x > static_cast<double>(in - 1))) ax.outside[o] = true;
    const double base = std::floor(x), frac = x - base;
    std::vector<int64_t> idx;
    std::vector<double> w;
    if (r.mode == Mode::kNearest) {
      bool up = false;  // take base + 1 instead of base
      if (frac != 0) {
        if (r.nearest == "round_prefer_floor") up = frac > 0.5;
        else if (r.nearest == "round_prefer_ceil") up = frac >= 0.5;
        else if (r.nearest == "ceil") up = true;
      }
      idx = {static_cast<int64_t>(base) + (up ? 1 : 0)};
      w = {1.0};
    } else if (r.mode == Mode::kLinear) {
      idx = {static_cast<int64_t>(base), static_cast<int64_t>(base) + 1};
      w = {1 - frac, frac};
    } else {
      const int64_t b = static_cast<int64_t>(base);
      idx = {b - 1, b, b + 1, b + 2};
      w = {cubic(r.a, frac + 1), cubic(r.a, frac), cubic(r.a, 1 - frac), cubic(r.a, 2 - frac)};
    }
    if (r.exclude) {  // taps outside the input weigh nothing; the rest are renormalised
      double sum = 0;
      for (size_t t = 0; t < idx.size(); ++t) {
        if (idx[t] < 0 || idx[t] >= in) w[t] = 0;
        sum += w[t];
      }
      if (sum != 0)
        for (double& v : w) v /= sum;
    }
    for (size_t t = 0; t < idx.size(); ++t) {  // the input's edge repeats beyond it
      ax.index.push_back(std::min(std::max<int64_t>(idx[t], 0), in - 1));
      ax.weight.push_back(ax.outside[o] ? 0.0 : w[t]);
    }
  }
  return ax;
}

std::vector<double> float_values(const AttrReader& ctx, const Tensor& t, const char* what) {
  if (!is_float(t.dtype())) ctx.fail(str_cat(what, " must be a float tensor, got ", t.type().str()));
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.as_double(i));
  return v;
}

}  // namespace

ResizeSpec resize_spec(const AttrReader& ctx, const Shape& in, const Tensor* roi, const Tensor* scales,
                       const Tensor* sizes) {
  if (ctx.opset() < 11) ctx.fail(str_cat("Resize of opset ", ctx.opset(), " is not supported (opset 11 and later are)"));
  Rules r;
  const std::string mode = ctx.attr_string("mode");
  if (mode == "nearest") r.mode = Mode::kNearest;
  else if (mode == "linear") r.mode = Mode::kLinear;
  else if (mode == "cubic") r.mode = Mode::kCubic;
  else ctx.fail(str_cat("mode '", mode, "' is not one of nearest, linear, cubic"));
  r.transform = ctx.attr_string("coordinate_transformation_mode");
  const char* transforms[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize",
                              "half_pixel_symmetric"};
  bool known = false;
  for (const char* t : transforms) known |= r.transform == t && (r.transform != "half_pixel_symmetric" || ctx.opset() >= 19);
  known |= r.transform == "tf_half_pixel_for_nn" && ctx.opset() < 13;  // opset 11 only
  if (!known) ctx.fail(str_cat("coordinate_transformation_mode '", r.transform, "' is not supported"));
  r.nearest = ctx.attr_string("nearest_mode");
  if (r.nearest != "round_prefer_floor" && r.nearest != "round_prefer_ceil" && r.nearest != "floor" && r.nearest != "ceil")
    ctx.fail(str_cat("nearest_mode '", r.nearest, "' is not one of round_prefer_floor, round_prefer_ceil, floor, ceil"));
  r.a = ctx.attr_float("cubic_coeff_a");
  r.exclude = ctx.attr_int("exclude_outside") != 0;
  if (ctx.opset() >= 18 && ctx.attr_int("antialias") != 0 && r.mode != Mode::kNearest)
    ctx.fail("antialiased resizing (antialias = 1) is not supported");

  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes;
  if (ctx.opset() >= 18 && ctx.has_attr("axes")) {
    axes = checked_axes(ctx, ctx.attr_ints("axes"), rank, "axes");
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  const size_t na = axes.size();
  if (scales && scales->numel() == 0) scales = nullptr;  // an empty scales input means "use sizes"
  if (sizes && sizes->numel() == 0) sizes = nullptr;
  if ((scales == nullptr) == (sizes == nullptr)) ctx.fail("exactly one of scales (input 2) and sizes (input 3) must be given");
  std::vector<double> scale(rank, 1.0);
  Shape out = in;
  if (scales) {
    const std::vector<double> s = float_values(ctx, *scales, "scales (input 2)");
    if (s.size() != na) ctx.fail(str_cat("scales has ", s.size(), " values; expected ", na));
    for (size_t i = 0; i < na; ++i) {
      if (!(s[i] > 0)) ctx.fail(str_cat("scales[", i, "] = ", s[i], " must be positive"));
      scale[axes[i]] = s[i];
    }
  } else {
    const std::vector<int64_t> z = int_values(ctx, *sizes, "sizes (input 3)");
    if (z.size() != na) ctx.fail(str_cat("sizes has ", z.size(), " values; expected ", na));
    for (size_t i = 0; i < na; ++i) {
      if (z[i] <= 0) ctx.fail(str_cat("sizes[", i, "] = ", z[i], " must be positive"));
      if (in[axes[i]] == 0) ctx.fail(str_cat("cannot resize the empty axis ", axes[i]));
      scale[axes[i]] = static_cast<double>(z[i]) / static_cast<double>(in[axes[i]]);
    }
    const std::string policy = ctx.opset() >= 18 ? ctx.attr_string("keep_aspect_ratio_policy") : "stretch";
    if (policy == "not_larger" || policy == "not_smaller") {
      double k = scale[axes[0]];
      for (int64_t a : axes) k = policy == "not_larger" ? std::min(k, scale[a]) : std::max(k, scale[a]);
      for (int64_t a : axes) scale[a] = k;
    } else if (policy != "stretch") {
      ctx.fail(str_cat("keep_aspect_ratio_policy '", policy, "' is not one of stretch, not_larger, not_smaller"));
    }
    for (size_t i = 0; i < na; ++i)
      out[axes[i]] = policy == "stretch" ? z[i] : static_cast<int64_t>(scale[axes[i]] * static_cast<double>(in[axes[i]]) + 0.5);
  }
  for (int64_t a : axes) {  // a nonsense scale must not overflow the extent's integer
    const double extent = scale[a] * static_cast<double>(in[a]);
    if (!(extent < 2147483648.0)) ctx.fail(str_cat("axis ", a, " would be resized to ", extent, " elements"));
    if (scales) out[a] = static_cast<int64_t>(std::floor(extent));
  }
  std::vector<double> r0(rank, 0.0), r1(rank, 1.0);
  if (r.transform == "tf_crop_and_resize") {
    if (!roi || roi->numel() == 0) ctx.fail("tf_crop_and_resize needs roi (input 1)");
    const std::vector<double> v = float_values(ctx, *roi, "roi (input 1)");
    if (v.size() != 2 * na) ctx.fail(str_cat("roi has ", v.size(), " values; expected ", 2 * na));
    for (size_t i = 0; i < na; ++i) {
      r0[axes[i]] = v[i];
      r1[axes[i]] = v[i + na];
    }
  }
  ResizeSpec spec;
  spec.extrapolation = ctx.attr_float("extrapolation_value");
  spec.out_shape = out;
  for (int64_t d = 0; d < rank; ++d) {
    const bool resized = out[d] != in[d] || scale[d] != 1.0 || r.transform == "tf_crop_and_resize";
    if (resized) {
      spec.axes.push_back(axis_table(ctx, r, in[d], out[d], scale[d], r0[d], r1[d]));
    } else {  // untouched: the identity table
      ResizeAxis id;
      id.in = id.out = in[d];
      id.outside.assign(in[d], false);
      for (int64_t o = 0; o < in[d]; ++o) {
        id.index.push_back(o);
        id.weight.push_back(1.0);
      }
      spec.axes.push_back(std::move(id));
    }
  }
  return spec;
}

static ResizeSpec spec_of(const AttrReader& ctx, const Shape& in, int n, const Tensor* const* known) {
  return resize_spec(ctx, in, n > 1 ? known[1] : nullptr, n > 2 ? known[2] : nullptr, n > 3 ? known[3] : nullptr);
}

static void infer_resize(InferContext& ctx) {
  ctx.expect_float(0);
  const Tensor* known[4] = {nullptr, nullptr, nullptr, nullptr};
  const char* names[4] = {"X", "roi", "scales", "sizes"};
  for (int i = 1; i < 4 && i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) known[i] = &ctx.require_known(i, names[i]);
  ctx.set_output(0, ctx.input_dtype(0), spec_of(ctx, ctx.input_shape(0), ctx.num_inputs(), known).out_shape);
}

// One axis at a time, as the decomposition does (in double precision here).
static void compute_resize(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor* known[4] = {nullptr, nullptr, nullptr, nullptr};
  for (int i = 1; i < 4 && i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) known[i] = &ctx.input(i);
  const ResizeSpec s = spec_of(ctx, x.shape(), ctx.num_inputs(), known);
  FloatView xv(x);
  std::vector<double> cur(xv.data(), xv.data() + x.numel());
  Shape shape = x.shape();
  for (size_t d = 0; d < s.axes.size(); ++d) {
    const ResizeAxis& ax = s.axes[d];
    if (ax.identity()) continue;
    const int64_t outer = dims_product(shape, 0, d), inner = dims_product(shape, d + 1, shape.size());
    std::vector<double> next(static_cast<size_t>(outer * ax.out * inner));
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t o = 0; o < ax.out; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          double v = ax.outside[o] ? s.extrapolation : 0.0;
          for (int t = 0; t < ax.taps; ++t)
            v += ax.weight[o * ax.taps + t] * cur[(a * ax.in + ax.index[o * ax.taps + t]) * inner + i];
          next[(a * ax.out + o) * inner + i] = v;
        }
    cur.swap(next);
    shape[d] = ax.out;
  }
  FloatOut out(ctx.output(0));
  for (size_t i = 0; i < cur.size(); ++i) out.data()[i] = static_cast<float>(cur[i]);
  out.finish();
}

const OpDef& op_def_Resize() {
  static const OpDef def{"Resize",
                         1,
                         4,
                         1,
                         1,
                         {attr("mode", "nearest"), attr("coordinate_transformation_mode", "half_pixel"),
                          attr("nearest_mode", "round_prefer_floor"), attr("cubic_coeff_a", -0.75f),
                          attr("exclude_outside", int64_t{0}), attr("extrapolation_value", 0.0f),
                          attr("antialias", int64_t{0}), attr_ints("axes"), attr("keep_aspect_ratio_policy", "stretch")},
                         infer_resize,
                         compute_resize};
  return def;
}

}  // namespace mono
