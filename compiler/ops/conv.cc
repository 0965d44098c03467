// Conv: N-D convolution (cross-correlation) of X (N x C x spatial...) with W
// (M x C/group x kernel...), optional bias B (M). Grouped convolutions run one GEMM per group
// over an im2col matrix; 1x1 unit-stride unpadded ones read X directly; depthwise ones with a
// small channel multiplier accumulate directly.
#include <algorithm>
#include <cstring>

#include "compiler/ops/linalg.h"
#include "compiler/ops/pool.h"
#include "compiler/ops/transpose.h"

namespace mono {

namespace {

// Largest im2col band, in floats (16 MiB).
constexpr int64_t kColBudget = int64_t{1} << 22;

std::vector<int64_t> conv_kernel(const AttrReader& ctx, const Shape& w) {
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (ctx.has_attr("kernel_shape")) {
    std::vector<int64_t> k = ctx.attr_ints("kernel_shape");
    if (k != kernel)
      ctx.fail(
          str_cat("kernel_shape [", shape_str(k), "] does not match W of shape ", shape_str(w)));
  }
  return kernel;
}

// Y's shape for X and W in the standard layout.
Shape conv_output_shape(const InferContext& ctx, const Shape& x, const Shape& w) {
  if (x.size() < 3) ctx.fail(str_cat("X must be N x C x spatial..., got ", shape_str(x)));
  if (w.size() != x.size())
    ctx.fail(str_cat("W of shape ", shape_str(w), " does not match X of shape ", shape_str(x),
                     " (ranks differ)"));
  const int64_t group = ctx.attr_int("group");
  if (group < 1) ctx.fail(str_cat("group must be >= 1, got ", group));
  const int64_t C = x[1], M = w[0];
  if (C % group != 0 || w[1] * group != C)
    ctx.fail(str_cat("X has ", C, " channels but W of shape ", shape_str(w), " with group ", group,
                     " expects ", w[1] * group));
  if (M % group != 0)
    ctx.fail(str_cat("W has ", M, " output channels, not a multiple of group ", group));
  if (ctx.has_input(2)) {
    const Shape& b = ctx.input_shape(2);
    if (b.size() != 1 || b[0] != M)
      ctx.fail(str_cat("bias B of shape ", shape_str(b), " must have shape ", M));
  }
  std::vector<int64_t> in(x.begin() + 2, x.end());
  WindowGeometry g = window_geometry(ctx, in, conv_kernel(ctx, w), false);
  Shape out{x[0], M};
  out.insert(out.end(), g.out.begin(), g.out.end());
  return out;
}

void infer_conv(InferContext& ctx) {
  ctx.expect_float(0);
  ctx.expect_same_dtype(0, 1);
  if (ctx.has_input(2)) ctx.expect_same_dtype(0, 2);
  const Shape& x = ctx.input_shape(0);
  const Shape& w = ctx.input_shape(1);
  if (!channels_last_layout(ctx.node())) {
    ctx.set_output(0, ctx.input_dtype(0), conv_output_shape(ctx, x, w));
    return;
  }
  const int64_t group = ctx.attr_int("group");
  if (x.size() != 4 || w.size() != 4 || (group != 1 && !(group == x[3] && w[0] == group && w[3] == 1)))
    ctx.fail("a channels-last Conv must be 2-D with one group, or depthwise (one channel a group)");
  const Shape y = conv_output_shape(ctx, permute_shape(x, kNhwcToNchw), permute_shape(w, kNhwcToNchw));
  ctx.set_output(0, ctx.input_dtype(0), permute_shape(y, kNchwToNhwc));
}

// One output row (an output position with the last spatial axis left out) under one kernel
// position: outputs [lo, hi) of the row read input row `in_row` at o * stride + off; the
// others read padding. in_row < 0: the whole row reads padding.
struct RowSpan {
  int64_t out_row, in_row, lo, hi, off;
};

// Per kernel position (row-major), the spans of every output row.
std::vector<std::vector<RowSpan>> row_spans(const WindowGeometry& g) {
  const size_t r = g.rank();
  const size_t last = r - 1;
  std::vector<int64_t> in_stride(r, 1);
  for (size_t i = r; i-- > 1;) in_stride[i - 1] = in_stride[i] * g.in[i];
  const int64_t out_last = g.out[last], in_last = g.in[last], s = g.strides[last];
  const int64_t rows = out_last ? g.out_numel() / out_last : 0;
  std::vector<std::vector<RowSpan>> spans(static_cast<size_t>(g.kernel_numel()));
  std::vector<int64_t> k(r, 0);
  for (auto& list : spans) {
    list.reserve(rows);
    const int64_t off = k[last] * g.dilations[last] - g.pad_begin[last];
    // Valid o: 0 <= o * s + off < in_last.
    int64_t lo = off >= 0 ? 0 : (-off + s - 1) / s;
    int64_t hi = in_last - 1 - off < 0 ? 0 : (in_last - 1 - off) / s + 1;
    hi = std::min(hi, out_last);
    lo = std::min(lo, hi);
    std::vector<int64_t> o(last, 0);
    for (int64_t row = 0; row < rows; ++row) {
      int64_t in_row = 0;
      for (size_t d = 0; d < last; ++d) {
        const int64_t idx = o[d] * g.strides[d] - g.pad_begin[d] + k[d] * g.dilations[d];
        if (idx < 0 || idx >= g.in[d]) {
          in_row = -1;
          break;
        }
        in_row += idx * in_stride[d];
      }
      list.push_back({row * out_last, in_row, lo, hi, off});
      for (size_t d = last; d-- > 0;) {
        if (++o[d] < g.out[d]) break;
        o[d] = 0;
      }
    }
    for (size_t d = r; d-- > 0;) {
      if (++k[d] < g.kernel[d]) break;
      k[d] = 0;
    }
  }
  return spans;
}

void compute_conv_nchw(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  Tensor& y = ctx.output(0);
  const Shape& xs = x.shape();
  const Shape& ws = w.shape();
  std::vector<int64_t> in(xs.begin() + 2, xs.end());
  const WindowGeometry g = window_geometry(ctx, in, conv_kernel(ctx, ws), false);
  const int64_t N = xs[0], C = xs[1], M = ws[0];
  const int64_t G = ctx.attr_int("group");
  const int64_t Cg = C / G, Mg = M / G;
  const int64_t S = g.in_numel(), P = g.out_numel(), KK = g.kernel_numel(), Kc = Cg * KK;
  const int64_t out_last = g.out.back(), s_last = g.strides.back();  // out_last > 0 below
  if (y.numel() == 0) return;
  FloatView xv(x), wv(w);
  FloatOut out(y);
  float* py = out.data();
  const float* px = xv.data();
  const float* pw = wv.data();

  bool pointwise = KK == 1;
  for (size_t i = 0; i < g.rank(); ++i)
    if (g.strides[i] != 1 || g.pad_begin[i] != 0 || g.pad_end[i] != 0) pointwise = false;
  const bool direct = Cg == 1 && Mg < 8 && !pointwise;
  std::vector<std::vector<RowSpan>> spans;
  if (!pointwise) spans = row_spans(g);

  if (direct) {
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t oc = 0; oc < M; ++oc) {
        const float* src = px + (n * C + oc / Mg) * S;
        float* dst = py + (n * M + oc) * P;
        std::fill(dst, dst + P, 0.0f);
        for (int64_t kidx = 0; kidx < KK; ++kidx) {
          const float wv_k = pw[oc * KK + kidx];
          for (const RowSpan& sp : spans[kidx]) {
            if (sp.in_row < 0 || sp.hi <= sp.lo) continue;
            float* dd = dst + sp.out_row + sp.lo;
            const float* srow = src + sp.in_row + sp.lo * s_last + sp.off;  // input of o = lo
            const int64_t len = sp.hi - sp.lo;
            if (s_last == 1) {
              for (int64_t o = 0; o < len; ++o) dd[o] += wv_k * srow[o];
            } else {
              for (int64_t o = 0; o < len; ++o) dd[o] += wv_k * srow[o * s_last];
            }
          }
        }
      }
    }
  } else {
    // The im2col matrix is built for a band of output rows at a time, bounding its size.
    const int64_t rows = P / out_last;
    const int64_t band =
        pointwise ? rows
                  : std::max<int64_t>(
                        1, std::min(rows, kColBudget / std::max<int64_t>(1, Kc * out_last)));
    thread_local std::vector<float> col_buf;
    if (!pointwise && static_cast<int64_t>(col_buf.size()) < Kc * band * out_last)
      col_buf.resize(static_cast<size_t>(Kc * band * out_last));
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t grp = 0; grp < G; ++grp) {
        const float* plane = px + (n * C + grp * Cg) * S;
        const float* wg = pw + grp * Mg * Kc;
        float* yg = py + (n * M + grp * Mg) * P;
        if (pointwise) {  // X itself is the Kc x P matrix
          gemm_f32(false, false, Mg, P, Kc, 1.0f, wg, Kc, plane, P, 0.0f, yg, P);
          continue;
        }
        for (int64_t r0 = 0; r0 < rows; r0 += band) {
          const int64_t r1 = std::min(rows, r0 + band);
          const int64_t cols = (r1 - r0) * out_last;  // output positions of the band
          float* cb = col_buf.data();
          for (int64_t c = 0; c < Cg; ++c) {
            const float* src = plane + c * S;
            for (int64_t kidx = 0; kidx < KK; ++kidx) {
              float* d = cb + (c * KK + kidx) * cols;
              for (int64_t row = r0; row < r1; ++row, d += out_last) {
                const RowSpan& sp = spans[kidx][row];
                if (sp.in_row < 0) {
                  std::fill(d, d + out_last, 0.0f);
                  continue;
                }
                std::fill(d, d + sp.lo, 0.0f);
                if (sp.hi > sp.lo) {
                  const float* srow = src + sp.in_row + sp.lo * s_last + sp.off;  // o = lo
                  float* dd = d + sp.lo;
                  const int64_t len = sp.hi - sp.lo;
                  if (s_last == 1) {
                    std::memcpy(dd, srow, sizeof(float) * len);
                  } else {
                    for (int64_t o = 0; o < len; ++o) dd[o] = srow[o * s_last];
                  }
                }
                std::fill(d + sp.hi, d + out_last, 0.0f);
              }
            }
          }
          gemm_f32(false, false, Mg, cols, Kc, 1.0f, wg, Kc, cb, cols, 0.0f, yg + r0 * out_last, P);
        }
      }
    }
  }
  if (ctx.has_input(2)) {
    FloatView bv(ctx.input(2));
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t oc = 0; oc < M; ++oc) {
        float* dst = py + (n * M + oc) * P;
        const float b = bv[oc];
        for (int64_t i = 0; i < P; ++i) dst[i] += b;
      }
    }
  }
  out.finish();
}

// A channels-last convolution is computed as the standard one over permuted copies (the
// reference favours being obviously right).
void compute_conv(ComputeContext& ctx) {
  if (!channels_last_layout(ctx.node())) {
    compute_conv_nchw(ctx);
    return;
  }
  compute_channels_last(ctx, compute_conv_nchw);
}

}  // namespace

bool channels_last_layout(const Node& node) {
  return (node.op == OpKind::kConv || node.op == OpKind::kMaxPool) && node_attrs(node).attr_int(kChannelsLastAttr) != 0;
}

WindowGeometry conv_geometry(const Node& node) {
  const AttrReader attrs = node_attrs(node);
  const bool last = channels_last_layout(node);
  const Shape& x = node.inputs[0]->type.shape;
  const Shape& w = node.inputs[1]->type.shape;
  const std::vector<int64_t> in = last ? std::vector<int64_t>(x.begin() + 1, x.end() - 1)
                                       : std::vector<int64_t>(x.begin() + 2, x.end());
  return window_geometry(attrs, in, conv_kernel(attrs, last ? permute_shape(w, kNhwcToNchw) : w), false);
}

bool pointwise_conv(const Node& node) {
  const WindowGeometry g = conv_geometry(node);
  for (size_t d = 0; d < g.rank(); ++d)
    if (g.kernel[d] != 1 || g.strides[d] != 1 || g.pad_begin[d] != 0 || g.pad_end[d] != 0) return false;
  return true;
}

const OpDef& op_def_Conv() {
  static const OpDef def{
      "Conv",
      2,
      3,
      1,
      1,
      {attr("auto_pad", "NOTSET"), attr_ints("dilations"), attr("group", int64_t{1}),
       attr_ints("kernel_shape"), attr_ints("pads"), attr_ints("strides"), attr(kChannelsLastAttr, int64_t{0})},
      infer_conv,
      compute_conv};
  return def;
}

}  // namespace mono
