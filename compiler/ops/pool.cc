#include "compiler/ops/pool.h"
#include "compiler/ops/transpose.h"

#include <algorithm>
#include <cstring>

namespace mono {

int64_t WindowGeometry::out_numel() const {
  int64_t n = 1;
  for (int64_t d : out) n *= d;
  return n;
}
int64_t WindowGeometry::in_numel() const {
  int64_t n = 1;
  for (int64_t d : in) n *= d;
  return n;
}
int64_t WindowGeometry::kernel_numel() const {
  int64_t n = 1;
  for (int64_t d : kernel) n *= d;
  return n;
}

static std::vector<int64_t> per_axis(const AttrReader& ctx, const char* name, size_t rank,
                                     int64_t def, int64_t min_value) {
  if (!ctx.has_attr(name)) return std::vector<int64_t>(rank, def);
  std::vector<int64_t> v = ctx.attr_ints(name);
  if (v.size() != rank)
    ctx.fail(str_cat(name, " has ", v.size(), " entries for ", rank, " spatial axes"));
  for (int64_t x : v)
    if (x < min_value) ctx.fail(str_cat(name, " must be >= ", min_value, ", got ", x));
  return v;
}

WindowGeometry window_geometry(const AttrReader& ctx, const std::vector<int64_t>& in,
                               const std::vector<int64_t>& kernel, bool ceil_mode) {
  const size_t r = in.size();
  WindowGeometry g;
  g.in = in;
  g.kernel = kernel;
  if (kernel.size() != r)
    ctx.fail(str_cat("kernel_shape has ", kernel.size(), " entries for ", r, " spatial axes"));
  for (int64_t k : kernel)
    if (k < 1) ctx.fail(str_cat("kernel_shape entries must be >= 1, got ", k));
  g.strides = per_axis(ctx, "strides", r, 1, 1);
  g.dilations = per_axis(ctx, "dilations", r, 1, 1);
  const std::string auto_pad = ctx.attr_string("auto_pad");
  g.pad_begin.assign(r, 0);
  g.pad_end.assign(r, 0);
  g.out.assign(r, 0);
  if (auto_pad == "NOTSET") {
    if (ctx.has_attr("pads")) {
      std::vector<int64_t> pads = ctx.attr_ints("pads");
      if (pads.size() != 2 * r)
        ctx.fail(str_cat("pads has ", pads.size(), " entries for ", r, " spatial axes (need ",
                         2 * r, ")"));
      for (int64_t p : pads)
        if (p < 0) ctx.fail(str_cat("pads must be >= 0, got ", p));
      for (size_t i = 0; i < r; ++i) {
        g.pad_begin[i] = pads[i];
        g.pad_end[i] = pads[r + i];
      }
    }
  } else if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID") {
    ctx.fail(str_cat("unsupported auto_pad '", auto_pad,
                     "' (expected NOTSET, SAME_UPPER, SAME_LOWER or VALID)"));
  }
  for (size_t i = 0; i < r; ++i) {
    const int64_t s = g.strides[i];
    const int64_t dk = (g.kernel[i] - 1) * g.dilations[i] + 1;  // dilated kernel extent
    int64_t out;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out = (in[i] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + dk - in[i]);
      g.pad_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pad_end[i] = total - g.pad_begin[i];
    } else {
      const int64_t span = in[i] + g.pad_begin[i] + g.pad_end[i] - dk;
      if (span < 0) {
        ctx.fail(str_cat("the kernel (extent ", dk, " with dilation) is larger than the ",
                         auto_pad == "VALID" ? "" : "padded ", "input (extent ",
                         in[i] + g.pad_begin[i] + g.pad_end[i], ") on spatial axis ", i));
      }
      if (ceil_mode) {  // explicit pads or VALID (SAME pads make the division exact)
        out = (span + s - 1) / s + 1;
        // The last window must start inside the input or its left padding.
        if ((out - 1) * s >= in[i] + g.pad_begin[i]) --out;
      } else {
        out = span / s + 1;
      }
    }
    if (out < 1 && in[i] > 0) ctx.fail(str_cat("output would be empty on spatial axis ", i));
    g.out[i] = std::max<int64_t>(out, 0);
  }
  return g;
}

WindowGeometry pool_geometry(const AttrReader& ctx, const Shape& x_shape) {
  if (x_shape.size() < 3)
    ctx.fail(str_cat("input must be N x C x spatial..., got ", shape_str(x_shape)));
  std::vector<int64_t> in(x_shape.begin() + 2, x_shape.end());
  return window_geometry(ctx, in, ctx.attr_ints("kernel_shape"), ctx.attr_int("ceil_mode") != 0);
}

void compute_channels_last(ComputeContext& ctx, void (*standard)(ComputeContext&)) {
  std::vector<Tensor> standard_inputs(ctx.num_inputs());
  std::vector<const Tensor*> inputs(ctx.num_inputs(), nullptr);
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    if (ctx.input(i).rank() == 4) {
      standard_inputs[i] = permute(ctx.input(i), kNhwcToNchw);
      inputs[i] = &standard_inputs[i];
    } else {
      inputs[i] = &ctx.input(i);
    }
  }
  Tensor& y = ctx.output(0);
  Tensor y_standard(y.dtype(), permute_shape(y.shape(), kNhwcToNchw));
  ComputeContext standard_ctx(ctx.node(), op_def(ctx.node().op), inputs, {&y_standard});
  standard(standard_ctx);
  const Tensor back = permute(y_standard, kNchwToNhwc);
  if (back.nbytes() > 0) std::memcpy(y.mutable_raw(), back.raw(), back.nbytes());
}

WindowGeometry pool_geometry(const Node& node) {
  const Shape& x = node.inputs[0]->type.shape;
  return pool_geometry(node_attrs(node), channels_last_layout(node) ? permute_shape(x, kNhwcToNchw) : x);
}

WindowTable window_table(const WindowGeometry& g) {
  const size_t r = g.rank();
  MONO_CHECK(r > 0, "window_table without spatial axes");
  // Per axis and output index: the valid input indices and the padded window count.
  std::vector<std::vector<std::vector<int64_t>>> valid(r);
  std::vector<std::vector<int64_t>> padded(r);
  std::vector<int64_t> in_stride(r, 1);
  for (size_t i = r; i-- > 1;) in_stride[i - 1] = in_stride[i] * g.in[i];
  for (size_t i = 0; i < r; ++i) {
    valid[i].resize(g.out[i]);
    padded[i].resize(g.out[i]);
    for (int64_t o = 0; o < g.out[i]; ++o) {
      const int64_t start = o * g.strides[i] - g.pad_begin[i];
      int64_t count = 0;
      for (int64_t k = 0; k < g.kernel[i]; ++k) {
        const int64_t idx = start + k * g.dilations[i];
        if (idx >= 0 && idx < g.in[i]) valid[i][o].push_back(idx * in_stride[i]);
        if (idx >= -g.pad_begin[i] && idx < g.in[i] + g.pad_end[i]) ++count;
      }
      padded[i][o] = count;
    }
  }
  WindowTable t;
  const int64_t n_out = g.out_numel();
  t.start.reserve(n_out + 1);
  t.padded_count.reserve(n_out);
  t.start.push_back(0);
  if (n_out == 0) return t;
  std::vector<int64_t> o(r, 0), w(r, 0);
  for (int64_t i = 0; i < n_out; ++i) {
    int64_t count = 1;
    bool empty = false;
    for (size_t d = 0; d < r; ++d) {
      count *= padded[d][o[d]];
      if (valid[d][o[d]].empty()) empty = true;
    }
    t.padded_count.push_back(count);
    if (!empty) {
      // Odometer over the window's valid positions.
      std::fill(w.begin(), w.end(), 0);
      while (true) {
        int64_t off = 0;
        for (size_t d = 0; d < r; ++d) off += valid[d][o[d]][w[d]];
        t.offsets.push_back(off);
        bool done = true;
        for (size_t d = r; d-- > 0;) {
          if (++w[d] < static_cast<int64_t>(valid[d][o[d]].size())) {
            done = false;
            break;
          }
          w[d] = 0;
        }
        if (done) break;
      }
    }
    t.start.push_back(static_cast<int64_t>(t.offsets.size()));
    for (size_t d = r; d-- > 0;) {
      if (++o[d] < g.out[d]) break;
      o[d] = 0;
    }
  }
  return t;
}

}  // namespace mono
