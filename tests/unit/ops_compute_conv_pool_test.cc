// Unit tests of the windowed ops (Conv, MaxPool, AveragePool, GlobalAveragePool): shape
// rules, values against naive references written here, every attribute form (pads, strides,
// dilations, groups, auto_pad, ceil_mode), f16 paths and user errors.
#include <chrono>
#include <cmath>
#include <cstdio>

#include "compiler/ops/infer.h"
#include "compiler/ops/op.h"
#include "compiler/ops/transpose.h"
#include "tests/unit/op_test_util.h"

namespace mono::testing {
namespace {

using Attrs = std::map<std::string, AttrValue>;
using Ints = std::vector<int64_t>;

// ---- naive references --------------------------------------------------------------------

struct ConvParams {
  Ints strides, dilations, pads;  // pads: begin..., end...
  int64_t group = 1;
};

// N-D convolution with explicit pads, output size floor((in + pads - dk) / s) + 1.
Tensor naive_conv(const Tensor& x, const Tensor& w, const Tensor* b, ConvParams p) {
  const Shape& xs = x.shape();
  const Shape& ws = w.shape();
  const size_t r = xs.size() - 2;
  if (p.strides.empty()) p.strides.assign(r, 1);
  if (p.dilations.empty()) p.dilations.assign(r, 1);
  if (p.pads.empty()) p.pads.assign(2 * r, 0);
  const int64_t N = xs[0], C = xs[1], M = ws[0], Cg = C / p.group, Mg = M / p.group;
  Shape out{N, M}, in(xs.begin() + 2, xs.end()), ks(ws.begin() + 2, ws.end());
  for (size_t d = 0; d < r; ++d) {
    const int64_t dk = (ks[d] - 1) * p.dilations[d] + 1;
    out.push_back((in[d] + p.pads[d] + p.pads[r + d] - dk) / p.strides[d] + 1);
  }
  std::vector<float> xv = x.to_float_vector(), wv = w.to_float_vector();
  std::vector<float> bv = b ? b->to_float_vector() : std::vector<float>();
  Tensor y(DType::kF32, out);
  float* py = y.mutable_data<float>();
  const auto xst = strides_of(xs), wst = strides_of(ws);
  const int64_t kk = shape_numel(ks);
  std::vector<std::vector<int64_t>> kps;
  for (int64_t k = 0; k < kk; ++k) kps.push_back(unravel(k, ks));
  for (int64_t i = 0; i < y.numel(); ++i) {
    std::vector<int64_t> o = unravel(i, out);
    const int64_t n = o[0], m = o[1], g = m / Mg;
    double s = b ? bv[m] : 0.0;
    for (int64_t c = 0; c < Cg; ++c)
      for (int64_t k = 0; k < kk; ++k) {
        const std::vector<int64_t>& kp = kps[k];
        int64_t xoff = n * xst[0] + (g * Cg + c) * xst[1];
        bool ok = true;
        for (size_t d = 0; d < r; ++d) {
          int64_t idx = o[2 + d] * p.strides[d] - p.pads[d] + kp[d] * p.dilations[d];
          if (idx < 0 || idx >= in[d]) ok = false;
          xoff += idx * xst[2 + d];
        }
        if (!ok) continue;
        int64_t woff = m * wst[0] + c * wst[1];
        for (size_t d = 0; d < r; ++d) woff += kp[d] * wst[2 + d];
        s += double(xv[xoff]) * wv[woff];
      }
    py[i] = static_cast<float>(s);
  }
  return y;
}

struct PoolParams {
  Ints kernel, strides, dilations, pads;
  Ints out;  // expected output spatial extents
  bool include_pad = false;
};

// Max (or average) pooling with explicit pads over windows clipped to the input; the padded
// count covers positions inside [-pad_begin, in + pad_end).
Tensor naive_pool(const Tensor& x, PoolParams p, bool average, Tensor* indices = nullptr) {
  const Shape& xs = x.shape();
  const size_t r = xs.size() - 2;
  if (p.strides.empty()) p.strides.assign(r, 1);
  if (p.dilations.empty()) p.dilations.assign(r, 1);
  if (p.pads.empty()) p.pads.assign(2 * r, 0);
  Shape out{xs[0], xs[1]};
  out.insert(out.end(), p.out.begin(), p.out.end());
  Shape in(xs.begin() + 2, xs.end());
  std::vector<float> xv = x.to_float_vector();
  Tensor y(DType::kF32, out);
  if (indices) *indices = Tensor(DType::kI64, out);
  const auto xst = strides_of(xs);
  const int64_t kk = shape_numel(p.kernel), S = shape_numel(in);
  for (int64_t i = 0; i < y.numel(); ++i) {
    std::vector<int64_t> o = unravel(i, out);
    double sum = 0, best = -INFINITY;
    int64_t count = 0, padded = 0, best_idx = -1;
    for (int64_t k = 0; k < kk; ++k) {
      std::vector<int64_t> kp = unravel(k, p.kernel);
      bool ok = true, in_pad = true;
      int64_t off = 0;
      for (size_t d = 0; d < r; ++d) {
        int64_t idx = o[2 + d] * p.strides[d] - p.pads[d] + kp[d] * p.dilations[d];
        if (idx < 0 || idx >= in[d]) ok = false;
        if (idx < -p.pads[d] || idx >= in[d] + p.pads[r + d]) in_pad = false;
        off += idx * xst[2 + d];
      }
      if (in_pad) ++padded;
      if (!ok) continue;
      const float v = xv[o[0] * xst[0] + o[1] * xst[1] + off];
      ++count;
      sum += v;
      if (v > best) {
        best = v;
        best_idx = (o[0] * xs[1] + o[1]) * S + off;
      }
    }
    y.mutable_data<float>()[i] =
        static_cast<float>(average ? sum / (p.include_pad ? padded : count) : best);
    if (indices) indices->mutable_data<int64_t>()[i] = best_idx;
  }
  return y;
}

// ---- Conv -------------------------------------------------------------------------------------

TEST(Conv, BasicWithAndWithoutPadding) {
  // ONNX's test_basic_conv_with_padding / without_padding.
  std::vector<float> xv(25);
  for (int i = 0; i < 25; ++i) xv[i] = static_cast<float>(i);
  Tensor x = f32({1, 1, 5, 5}, xv);
  Tensor w = f32({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  auto y =
      run_op(OpKind::kConv, {x, w}, {{"kernel_shape", Is({3, 3})}, {"pads", Is({1, 1, 1, 1})}});
  EXPECT_TRUE(tensors_near(y[0], f32({1, 1, 5, 5}, {12, 21,  27,  33,  24,   //
                                                    33, 54,  63,  72,  51,   //
                                                    63, 99,  108, 117, 81,   //
                                                    93, 144, 153, 162, 111,  //
                                                    72, 111, 117, 123, 84})));
  y = run_op(OpKind::kConv, {x, w});
  EXPECT_TRUE(tensors_near(y[0], f32({1, 1, 3, 3}, {54, 63, 72, 99, 108, 117, 144, 153, 162})));
}

struct ConvCase {
  const char* name;
  Shape x, w;
  ConvParams p;
  bool bias;
};

void check_conv(const ConvCase& c, DType dt = DType::kF32) {
  Tensor x = rand_tensor(c.x, 100, dt), w = rand_tensor(c.w, 101, dt);
  Tensor b = rand_tensor({c.w[0]}, 102, dt);
  Attrs attrs{{"group", I(c.p.group)}};
  if (!c.p.strides.empty()) attrs["strides"] = Is(c.p.strides);
  if (!c.p.dilations.empty()) attrs["dilations"] = Is(c.p.dilations);
  if (!c.p.pads.empty()) attrs["pads"] = Is(c.p.pads);
  std::vector<std::optional<Tensor>> inputs{x, w};
  if (c.bias) inputs.push_back(b);
  auto y = run_op(OpKind::kConv, inputs, attrs);
  Tensor want = naive_conv(x, w, c.bias ? &b : nullptr, c.p);
  if (dt == DType::kF16) want = want.cast(DType::kF16);
  // float accumulation error grows with the reduction length.
  const double depth = static_cast<double>(shape_numel(c.w) / c.w[0]);
  EXPECT_TRUE(tensors_near(y[0], want, dt == DType::kF16 ? 3e-3 : 2e-6 * std::sqrt(depth) + 1e-6))
      << c.name;
}

TEST(Conv, AgainstNaiveReference) {
  const ConvCase cases[] = {
      {"2d plain", {2, 3, 9, 8}, {4, 3, 3, 3}, {}, true},
      {"2d strided padded", {1, 3, 10, 11}, {5, 3, 3, 2}, {{2, 3}, {}, {1, 0, 2, 1}}, true},
      {"2d dilated", {1, 2, 12, 12}, {3, 2, 3, 3}, {{1, 1}, {2, 3}, {2, 1, 0, 3}}, false},
      {"2d strided dilated padded",
       {2, 4, 13, 9},
       {6, 4, 3, 2},
       {{2, 2}, {2, 2}, {1, 2, 3, 1}},
       true},
      {"grouped", {1, 6, 7, 7}, {9, 2, 3, 3}, {{1, 1}, {}, {1, 1, 1, 1}, 3}, true},
      {"grouped strided", {2, 8, 9, 10}, {4, 4, 3, 3}, {{2, 2}, {1, 2}, {0, 1, 1, 0}, 2}, true},
      {"depthwise", {1, 8, 10, 10}, {8, 1, 3, 3}, {{1, 1}, {}, {1, 1, 1, 1}, 8}, true},
      {"depthwise strided", {2, 5, 11, 9}, {5, 1, 5, 3}, {{2, 3}, {1, 2}, {2, 1, 0, 2}, 5}, false},
      {"depthwise multiplier 2", {1, 3, 8, 8}, {6, 1, 3, 3}, {{1, 2}, {}, {1, 1, 1, 1}, 3}, true},
      {"depthwise multiplier 8", {1, 2, 6, 6}, {16, 1, 3, 3}, {{}, {}, {1, 1, 1, 1}, 2}, true},
      {"pointwise", {2, 16, 5, 6}, {8, 16, 1, 1}, {}, true},
      {"pointwise strided", {1, 16, 7, 7}, {8, 16, 1, 1}, {{2, 2}, {}, {}}, true},
      {"pointwise padded", {1, 3, 4, 4}, {2, 3, 1, 1}, {{}, {}, {1, 0, 0, 1}}, true},
      {"single input channel", {1, 1, 9, 9}, {12, 1, 3, 3}, {{2, 2}, {}, {1, 1, 1, 1}}, true},
      {"kernel larger than stride span", {1, 2, 5, 5}, {3, 2, 5, 5}, {{}, {}, {4, 4, 4, 4}}, true},
      {"1d", {2, 3, 17}, {4, 3, 4}, {{2}, {2}, {3, 1}}, true},
      {"1d depthwise", {1, 4, 12}, {4, 1, 3}, {{1}, {1}, {1, 1}, 4}, true},
      {"3d", {1, 2, 5, 6, 7}, {3, 2, 2, 3, 2}, {{1, 2, 1}, {2, 1, 1}, {1, 0, 1, 0, 1, 1}}, true},
      {"3d grouped",
       {1, 4, 4, 5, 5},
       {4, 2, 3, 3, 3},
       {{2, 1, 2}, {}, {1, 1, 1, 1, 1, 1}, 2},
       false},
      {"large channels", {1, 64, 16, 16}, {64, 64, 3, 3}, {{}, {}, {1, 1, 1, 1}}, true},
      // Kc x P beyond the im2col budget: built in bands of output rows.
      {"banded im2col", {1, 256, 40, 500}, {2, 256, 3, 3}, {{1, 1}, {}, {1, 0, 0, 1}}, true},
  };
  for (const ConvCase& c : cases) check_conv(c);
}

TEST(Conv, Half) {
  check_conv({"f16", {1, 4, 6, 6}, {5, 4, 3, 3}, {{1, 1}, {}, {1, 1, 1, 1}}, true}, DType::kF16);
  check_conv({"f16 depthwise", {1, 4, 6, 6}, {4, 1, 3, 3}, {{2, 2}, {}, {1, 1, 1, 1}, 4}, true},
             DType::kF16);
}

TEST(Conv, AutoPad) {
  Tensor x = rand_tensor({1, 2, 7, 8}, 110), w = rand_tensor({3, 2, 3, 4}, 111);
  // strides 2: out = ceil(7/2)=4, ceil(8/2)=4; total pads: (4-1)*2+3-7 = 2, (4-1)*2+4-8 = 2.
  auto y = run_op(OpKind::kConv, {x, w}, {{"auto_pad", S("SAME_UPPER")}, {"strides", Is({2, 2})}});
  EXPECT_TRUE(tensors_near(y[0], naive_conv(x, w, nullptr, {{2, 2}, {}, {1, 1, 1, 1}}), 1e-5));
  // strides 1, kernel 4 wide: total 3 -> upper puts the extra pad at the end, lower at the start.
  y = run_op(OpKind::kConv, {x, w}, {{"auto_pad", S("SAME_UPPER")}});
  EXPECT_TRUE(tensors_near(y[0], naive_conv(x, w, nullptr, {{}, {}, {1, 1, 1, 2}}), 1e-5));
  y = run_op(OpKind::kConv, {x, w}, {{"auto_pad", S("SAME_LOWER")}});
  EXPECT_TRUE(tensors_near(y[0], naive_conv(x, w, nullptr, {{}, {}, {1, 2, 1, 1}}), 1e-5));
  // VALID ignores pads.
  y = run_op(OpKind::kConv, {x, w},
             {{"auto_pad", S("VALID")}, {"strides", Is({2, 3})}, {"pads", Is({1, 1, 1, 1})}});
  EXPECT_TRUE(tensors_near(y[0], naive_conv(x, w, nullptr, {{2, 3}, {}, {}}), 1e-5));
  EXPECT_EQ(y[0].shape(), (Shape{1, 3, 3, 2}));
  // SAME with dilation: dilated kernel 5x7.
  y = run_op(OpKind::kConv, {x, w}, {{"auto_pad", S("SAME_LOWER")}, {"dilations", Is({2, 2})}});
  EXPECT_TRUE(tensors_near(y[0], naive_conv(x, w, nullptr, {{}, {2, 2}, {2, 3, 2, 3}}), 1e-5));
}

TEST(Conv, ShapeRuleAndErrors) {
  Tensor x = rand_tensor({1, 4, 6, 6}, 1), w = rand_tensor({6, 2, 3, 3}, 2);
  auto t = infer_op(OpKind::kConv, {x, w}, {{"group", I(2)}, {"strides", Is({2, 2})}});
  EXPECT_EQ(t[0], (TensorType{DType::kF32, {1, 6, 2, 2}}));
  EXPECT_USER_ERROR(run_op(OpKind::kConv, {x, w}), "X has 4 channels");
  EXPECT_USER_ERROR(run_op(OpKind::kConv, {x, w}, {{"group", I(2)}, {"kernel_shape", Is({3, 2})}}),
                    "kernel_shape");
  EXPECT_USER_ERROR(run_op(OpKind::kConv, {x, rand_tensor({6, 4, 7, 7}, 3)}), "larger than");
  EXPECT_USER_ERROR(run_op(OpKind::kConv, {x, w, rand_tensor({5}, 4)}, {{"group", I(2)}}), "bias");
  EXPECT_USER_ERROR(run_op(OpKind::kConv, {x, w}, {{"group", I(2)}, {"pads", Is({1, 1})}}),
                    "pads has 2 entries");
  EXPECT_USER_ERROR(run_op(OpKind::kConv, {x, w}, {{"group", I(2)}, {"auto_pad", S("SAME")}}),
                    "auto_pad");
  EXPECT_USER_ERROR(run_op(OpKind::kConv, {x, rand_tensor({6, 4, 3}, 5)}), "ranks differ");
}

// mono.channels_last (the channels_last pass's form): X, Y [N][H][W][C] and W [F][KH][KW][C/group],
// the same sums as the standard layout's; 2-D with one group, or depthwise.
TEST(Conv, ChannelsLast) {
  const std::vector<int64_t> to_last = {0, 2, 3, 1};
  Tensor x = rand_tensor({2, 8, 7, 9}, 120), w = rand_tensor({16, 8, 3, 3}, 121), b = rand_tensor({16}, 122);
  const Attrs attrs = {{"strides", Is({2, 1})}, {"pads", Is({1, 0, 1, 2})}, {"dilations", Is({1, 2})}};
  Attrs last = attrs;
  last["mono.channels_last"] = I(1);
  auto y = run_op(OpKind::kConv, {permute(x, to_last), permute(w, to_last), b}, last);
  EXPECT_TRUE(tensors_near(y[0], permute(naive_conv(x, w, &b, {{2, 1}, {1, 2}, {1, 0, 1, 2}}), to_last), 1e-5));
  EXPECT_EQ(infer_op(OpKind::kConv, {permute(x, to_last), permute(w, to_last)}, last)[0].shape,
            permute(run_op(OpKind::kConv, {x, w}, attrs)[0], to_last).shape());
  EXPECT_USER_ERROR(run_op(OpKind::kConv, {permute(x, to_last), rand_tensor({16, 4, 3, 3}, 123)},
                           {{"mono.channels_last", I(1)}, {"group", I(2)}}),
                    "one group");
  // Depthwise (MobileNet's): one channel a group, W [C][KH][KW][1].
  Tensor wd = rand_tensor({8, 1, 3, 3}, 124), bd = rand_tensor({8}, 125);
  Attrs dw = attrs;
  dw["group"] = I(8);
  Attrs dw_last = dw;
  dw_last["mono.channels_last"] = I(1);
  auto yd = run_op(OpKind::kConv, {permute(x, to_last), permute(wd, to_last), bd}, dw_last);
  EXPECT_TRUE(tensors_near(yd[0], permute(run_op(OpKind::kConv, {x, wd, bd}, dw)[0], to_last), 1e-5));
  // Two output channels a group is not depthwise in Mono's sense: refused.
  EXPECT_USER_ERROR(run_op(OpKind::kConv, {permute(x, to_last), rand_tensor({16, 3, 3, 1}, 126)}, dw_last), "depthwise");
}

TEST(Conv, TinyModelSpeed) {
  // 50 convolutions of 32 channels at 32x32 (batch 1) must take well under a second.
  Tensor x = rand_tensor({1, 32, 32, 32}, 120), w = rand_tensor({32, 32, 3, 3}, 121);
  Tensor b = rand_tensor({32}, 122);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 50; ++i) {
    x = run_op(OpKind::kConv, {x, w, b}, {{"pads", Is({1, 1, 1, 1})}})[0];
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("50 convs 32x32x32 3x3: %.3f s\n", s);
  EXPECT_LT(s, 2.0);
}

// ---- MaxPool / AveragePool / GlobalAveragePool ----------------------------------------------

TEST(MaxPool, CeilModeExample) {
  // ONNX's test_maxpool_2d_ceil.
  std::vector<float> xv(16);
  for (int i = 0; i < 16; ++i) xv[i] = static_cast<float>(i + 1);
  auto y = run_op(OpKind::kMaxPool, {f32({1, 1, 4, 4}, xv)},
                  {{"kernel_shape", Is({3, 3})}, {"strides", Is({2, 2})}, {"ceil_mode", I(1)}});
  EXPECT_TRUE(tensors_near(y[0], f32({1, 1, 2, 2}, {11, 12, 15, 16})));
}

TEST(MaxPool, CeilModeWindowMustStartInsideInput) {
  // in 5, kernel 2, stride 2, pads 1/1: ceil gives 4 windows, but the 4th would start at
  // 6 - 1 = 5, in the right padding: it is dropped.
  Tensor x = rand_tensor({1, 1, 5}, 130);
  auto t = infer_op(
      OpKind::kMaxPool, {x},
      {{"kernel_shape", Is({2})}, {"strides", Is({2})}, {"pads", Is({1, 1})}, {"ceil_mode", I(1)}});
  EXPECT_EQ(t[0].shape, (Shape{1, 1, 3}));
  // in 6, kernel 3, stride 2, no pads: floor 2, ceil 3 (the third window starts at 4, inside).
  t = infer_op(OpKind::kAveragePool, {rand_tensor({1, 1, 6, 6}, 131)},
               {{"kernel_shape", Is({3, 3})}, {"strides", Is({2, 2})}, {"ceil_mode", I(1)}});
  EXPECT_EQ(t[0].shape, (Shape{1, 1, 3, 3}));
}

struct PoolCase {
  const char* name;
  Shape x;
  PoolParams p;
  Attrs extra;  // auto_pad / ceil_mode instead of the explicit pads given to the reference
};

void check_pool(OpKind op, const PoolCase& c, DType dt = DType::kF32) {
  Tensor x = rand_tensor(c.x, 140, dt);
  Attrs attrs = c.extra;
  attrs["kernel_shape"] = Is(c.p.kernel);
  if (!c.p.strides.empty()) attrs["strides"] = Is(c.p.strides);
  if (!c.p.dilations.empty()) attrs["dilations"] = Is(c.p.dilations);
  if (!c.p.pads.empty() && !attrs.count("auto_pad")) attrs["pads"] = Is(c.p.pads);
  const bool avg = op == OpKind::kAveragePool;
  if (avg) attrs["count_include_pad"] = I(c.p.include_pad);
  Tensor want_idx;
  Tensor want = naive_pool(x, c.p, avg, &want_idx);
  if (dt == DType::kF16) want = want.cast(DType::kF16);
  auto y = run_op(op, {x}, attrs, avg ? 1 : 2);
  EXPECT_TRUE(tensors_near(y[0], want, dt == DType::kF16 ? 2e-3 : 1e-6)) << c.name;
  if (!avg) {
    EXPECT_TRUE(y[1].identical(want_idx)) << c.name << " indices";
  }
}

const std::vector<PoolCase>& pool_cases() {
  static const std::vector<PoolCase> cases = {
      {"2d", {2, 3, 8, 8}, {{2, 2}, {2, 2}, {}, {}, {4, 4}}, {}},
      {"2d overlapping", {1, 2, 7, 9}, {{3, 3}, {1, 1}, {}, {}, {5, 7}}, {}},
      {"2d padded", {1, 2, 6, 7}, {{3, 3}, {2, 2}, {}, {1, 1, 1, 1}, {3, 4}}, {}},
      {"2d asymmetric pads", {1, 1, 6, 6}, {{3, 2}, {1, 2}, {}, {2, 0, 0, 1}, {6, 3}}, {}},
      {"2d dilated", {1, 2, 9, 9}, {{2, 3}, {2, 1}, {2, 2}, {1, 0, 1, 1}, {5, 6}}, {}},
      {"2d ceil", {1, 2, 8, 8}, {{3, 3}, {2, 2}, {}, {}, {4, 4}}, {{"ceil_mode", I(1)}}},
      {"2d ceil padded",
       {1, 1, 7, 5},
       {{2, 2}, {2, 2}, {}, {1, 1, 0, 1}, {4, 3}},
       {{"ceil_mode", I(1)}}},
      {"2d same upper",
       {1, 2, 7, 8},
       {{3, 2}, {2, 2}, {}, {1, 0, 1, 0}, {4, 4}},
       {{"auto_pad", S("SAME_UPPER")}}},
      {"2d same lower",
       {1, 2, 6, 6},
       {{2, 2}, {1, 1}, {}, {1, 1, 0, 0}, {6, 6}},
       {{"auto_pad", S("SAME_LOWER")}}},
      {"2d valid", {1, 2, 7, 8}, {{3, 2}, {2, 3}, {}, {}, {3, 3}}, {{"auto_pad", S("VALID")}}},
      // ceil_mode applies to VALID: H gains a window, W's extra one would start past the end.
      {"2d valid ceil",
       {1, 2, 8, 9},
       {{3, 2}, {2, 3}, {}, {}, {4, 3}},
       {{"auto_pad", S("VALID")}, {"ceil_mode", I(1)}}},
      {"1d", {2, 3, 11}, {{3}, {2}, {}, {1, 1}, {6}}, {}},
      {"3d", {1, 2, 5, 6, 4}, {{2, 3, 2}, {1, 2, 2}, {}, {0, 1, 1, 1, 0, 0}, {5, 3, 2}}, {}},
  };
  return cases;
}

TEST(MaxPool, AgainstNaiveReference) {
  for (const PoolCase& c : pool_cases()) check_pool(OpKind::kMaxPool, c);
}

// mono.channels_last: X and Y [N][H][W][C], the standard maxima; no Indices output.
TEST(MaxPool, ChannelsLast) {
  const std::vector<int64_t> to_last = {0, 2, 3, 1};
  Tensor x = rand_tensor({2, 5, 9, 8}, 130);
  const Attrs attrs = {{"kernel_shape", Is({3, 2})}, {"strides", Is({2, 1})}, {"pads", Is({1, 0, 1, 1})}};
  Attrs last = attrs;
  last["mono.channels_last"] = I(1);
  auto y = run_op(OpKind::kMaxPool, {permute(x, to_last)}, last);
  EXPECT_TRUE(tensors_near(y[0], permute(naive_pool(x, {{3, 2}, {2, 1}, {}, {1, 0, 1, 1}, {5, 8}}, false), to_last), 1e-6));
  EXPECT_USER_ERROR(run_op(OpKind::kMaxPool, {permute(x, to_last)}, last, 2), "without Indices");
}

TEST(MaxPool, ColumnMajorIndices) {
  // ONNX's test_maxpool_with_argmax_2d_precomputed_strides semantics: storage_order 1.
  std::vector<float> xv(25);
  for (int i = 0; i < 25; ++i) xv[i] = static_cast<float>(i + 1);
  auto y =
      run_op(OpKind::kMaxPool, {f32({1, 1, 5, 5}, xv)},
             {{"kernel_shape", Is({2, 2})}, {"strides", Is({2, 2})}, {"storage_order", I(1)}}, 2);
  EXPECT_TRUE(tensors_near(y[0], f32({1, 1, 2, 2}, {7, 9, 17, 19})));
  EXPECT_TRUE(y[1].identical(i64({1, 1, 2, 2}, {6, 16, 8, 18})));
  // Second plane: the offset of the plane is added.
  auto y2 = run_op(OpKind::kMaxPool, {f32({1, 2, 1, 2}, {1, 2, 4, 3})},
                   {{"kernel_shape", Is({1, 2})}, {"storage_order", I(1)}}, 2);
  EXPECT_TRUE(y2[1].identical(i64({1, 2, 1, 1}, {1, 2})));
}

TEST(MaxPool, HalfAndOnlyFirstOutput) {
  check_pool(OpKind::kMaxPool, pool_cases()[2], DType::kF16);
  auto y = run_op(OpKind::kMaxPool, {rand_tensor({1, 1, 4, 4}, 1)}, {{"kernel_shape", Is({2, 2})}});
  EXPECT_EQ(y.size(), 1u);
}

TEST(MaxPool, Errors) {
  Tensor x = rand_tensor({1, 1, 4, 4}, 1);
  EXPECT_USER_ERROR(run_op(OpKind::kMaxPool, {x}, {}), "kernel_shape");
  EXPECT_USER_ERROR(run_op(OpKind::kMaxPool, {x}, {{"kernel_shape", Is({2})}}),
                    "kernel_shape has 1");
  EXPECT_USER_ERROR(run_op(OpKind::kMaxPool, {x}, {{"kernel_shape", Is({5, 5})}}), "larger than");
  EXPECT_USER_ERROR(
      run_op(OpKind::kMaxPool, {x}, {{"kernel_shape", Is({2, 2})}, {"strides", Is({0, 1})}}),
      "strides must be >= 1");
  EXPECT_USER_ERROR(
      run_op(OpKind::kMaxPool, {rand_tensor({4, 4}, 1)}, {{"kernel_shape", Is({2, 2})}}),
      "N x C x spatial");
}

TEST(AveragePool, AgainstNaiveReference) {
  for (bool include : {false, true}) {
    for (PoolCase c : pool_cases()) {
      c.p.include_pad = include;
      check_pool(OpKind::kAveragePool, c);
    }
  }
}

TEST(AveragePool, OnnxExamples) {
  std::vector<float> xv(16);
  for (int i = 0; i < 16; ++i) xv[i] = static_cast<float>(i + 1);
  Tensor x = f32({1, 1, 4, 4}, xv);
  // test_averagepool_2d_ceil.
  auto y = run_op(OpKind::kAveragePool, {x},
                  {{"kernel_shape", Is({3, 3})}, {"strides", Is({2, 2})}, {"ceil_mode", I(1)}});
  EXPECT_TRUE(tensors_near(y[0], f32({1, 1, 2, 2}, {6, 7.5, 12, 13.5})));
  // Padding counted or not.
  y = run_op(OpKind::kAveragePool, {x}, {{"kernel_shape", Is({2, 2})}, {"pads", Is({1, 1, 0, 0})}});
  EXPECT_NEAR(y[0].as_double(0), 1.0, 1e-6);
  y = run_op(
      OpKind::kAveragePool, {x},
      {{"kernel_shape", Is({2, 2})}, {"pads", Is({1, 1, 0, 0})}, {"count_include_pad", I(1)}});
  EXPECT_NEAR(y[0].as_double(0), 0.25, 1e-6);
  EXPECT_NEAR(y[0].as_double(1), 0.75, 1e-6);  // (1 + 2) / 4
}

TEST(AveragePool, Half) {
  PoolCase c = pool_cases()[3];
  c.p.include_pad = true;
  check_pool(OpKind::kAveragePool, c, DType::kF16);
}

TEST(GlobalAveragePool, MeansOverSpatialAxes) {
  Tensor x = rand_tensor({2, 3, 4, 5}, 150);
  auto y = run_op(OpKind::kGlobalAveragePool, {x});
  ASSERT_EQ(y[0].shape(), (Shape{2, 3, 1, 1}));
  for (int p = 0; p < 6; ++p) {
    double s = 0;
    for (int i = 0; i < 20; ++i) s += x.as_double(p * 20 + i);
    EXPECT_NEAR(y[0].as_double(p), s / 20, 1e-6);
  }
  auto y1 = run_op(OpKind::kGlobalAveragePool, {f32({1, 2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_TRUE(tensors_near(y1[0], f32({1, 2, 1}, {2, 5})));
  auto yh = run_op(OpKind::kGlobalAveragePool, {half(f32({1, 1, 2, 2}, {1, 2, 3, 4.5}))});
  EXPECT_TRUE(tensors_near(yh[0], half(f32({1, 1, 1, 1}, {2.625}))));
}

}  // namespace
}  // namespace mono::testing
