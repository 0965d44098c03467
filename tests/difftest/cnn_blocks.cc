// The convolutional pieces of the random graphs (cnn_blocks.h).
#include "tests/difftest/cnn_blocks.h"

#include <algorithm>

namespace mono::difftest {

// An inference BatchNormalization of v: scale, bias and mean random, variances 1 to 3.
Val batch_norm(GraphWriter& w, const Val v) {  // a copy: node() grows the values
  const int64_t C = v.shape[1];
  const std::string vn = w.str_name("c");
  std::string vals = "[";
  for (int64_t c = 0; c < C; ++c) vals += (c ? ", " : "") + std::to_string(1 + w.pick(3)) + ".0";
  w.const_line(vn, {C}, vals + "]");
  return w.node("BatchNormalization", {v.name, w.float_const({C}), w.float_const({C}), w.float_const({C}), vn}, v.shape);
}

// A dense block (DenseNet): each layer reads the Concat of every earlier layer's output,
// normalizes it (a BatchNormalization no Conv absorbs) and ReLU, a 1x1 then a padded 3x3
// Conv. Channel counts are multiples of 8, so the block goes channels-last.
bool dense_block(GraphWriter& w, const Val v) {  // a copy: node() grows the values
  const int64_t N = v.shape[0], H = v.shape[2], W = v.shape[3];
  const int64_t grow = 8 * (1 + w.pick(2)), inner = 8 * (1 + w.pick(2)), layers = 2 + w.pick(2);
  int64_t C = 8 * (1 + w.pick(2));
  if (numel({N, C + layers * grow, H, W}) > kMaxElements) return false;
  std::vector<std::string> features = {w.node("Conv", {v.name, w.float_const({C, v.shape[1], 1, 1})}, {N, C, H, W}).name};
  for (int64_t l = 0; l < layers; ++l) {
    std::string in = features[0];
    if (features.size() > 1) in = w.node("Concat", features, {N, C, H, W}, "axis=1").name;
    const Val r = w.node("Relu", {batch_norm(w, Val{in, {N, C, H, W}}).name}, {N, C, H, W});
    const Val a = w.node("Conv", {r.name, w.float_const({inner, C, 1, 1}), w.float_const({inner})}, {N, inner, H, W});
    const Val b = w.node("Relu", {a.name}, a.shape);
    features.push_back(w.node("Conv", {b.name, w.float_const({grow, inner, 3, 3})}, {N, grow, H, W}, "pads=[1, 1, 1, 1]").name);
    C += grow;
  }
  w.node("Concat", features, {N, C, H, W}, "axis=1");
  return true;
}

// Inverted residual blocks (MobileNetV2): a 1x1 Conv to C channels, then blocks of a 1x1
// expansion, a depthwise k x k Conv (3 or 5, stride 1 or 2, sometimes dilated) and a 1x1
// projection, ReLU6 or ReLU after the first two, a residual Add where the shape is kept.
// Channel counts are multiples of 8, so the blocks go channels-last, depthwise included.
bool inverted_residual(GraphWriter& w, const Val v) {  // a copy: node() grows the values
  const int64_t N = v.shape[0];
  int64_t C = 8 * (1 + w.pick(2)), H = v.shape[2], W = v.shape[3];
  std::string x = w.node("Conv", {v.name, w.float_const({C, v.shape[1], 1, 1})}, {N, C, H, W}).name;
  auto act = [&](const Val& y) {
    if (w.chance(0.5)) return w.node("Relu", {y.name}, y.shape).name;
    return w.node("Clip", {y.name, w.scalar_const(0.0), w.scalar_const(6.0)}, y.shape, "", true).name;
  };
  for (int64_t b = 0, blocks = 1 + w.pick(2); b < blocks; ++b) {
    const int64_t E = C * (2 + w.pick(3)), k = w.chance(0.7) ? 3 : 5, s = w.chance(0.3) ? 2 : 1, d = k == 3 && w.chance(0.2) ? 2 : 1;
    const int64_t p = d * (k / 2), Ho = (H + 2 * p - d * (k - 1) - 1) / s + 1, Wo = (W + 2 * p - d * (k - 1) - 1) / s + 1;
    const int64_t Co = w.chance(0.6) ? C : 8 * (1 + w.pick(3));
    if (Ho < 1 || Wo < 1 || numel({N, E, H, W}) > kMaxElements) break;
    const std::string e = act(w.node("Conv", {x, w.float_const({E, C, 1, 1}), w.float_const({E})}, {N, E, H, W}));
    std::vector<std::string> dw_args = {e, w.float_const({E, 1, k, k})};
    if (w.chance(0.7)) dw_args.push_back(w.float_const({E}));
    const std::string dw = act(w.node("Conv", dw_args, {N, E, Ho, Wo},
                                    str_attrs({"group=" + std::to_string(E), "pads=" + ints_text({p, p, p, p}),
                                               "strides=" + ints_text({s, s}), d > 1 ? "dilations=" + ints_text({d, d}) : ""})));
    std::string y = w.node("Conv", {dw, w.float_const({Co, E, 1, 1}), w.float_const({Co})}, {N, Co, Ho, Wo}).name;
    if (s == 1 && Co == C) y = w.node("Add", {x, y}, {N, Co, Ho, Wo}).name;
    x = y, C = Co, H = Ho, W = Wo;
  }
  return true;
}

// Squeeze-and-excitation (EfficientNet, MobileNetV3, RegNetY): the image's channel means
// through two 1x1 Convs on one pixel (the GEMV path), or two Gemms on the flattened means
// reshaped back, gating the image; the squeeze's activation ReLU, SiLU or HardSwish, the gate
// Sigmoid or HardSigmoid (MobileNetV3's). Small squeezes run inside the excite (Group::squeeze).
bool squeeze_excite(GraphWriter& w, const Val v) {  // a copy: node() grows the values
  const int64_t N = v.shape[0], C = v.shape[1], R = 1 + w.pick(static_cast<int>(std::max<int64_t>(1, C / 2)));
  if (N != 1) return false;  // a batch of images is a GEMM, not one row
  const Dims one = {1, C, 1, 1};
  const bool gemm = w.chance(0.3);
  const Dims squeezed = gemm ? Dims{1, R} : Dims{1, R, 1, 1}, excited = gemm ? Dims{1, C} : one;
  std::string m = w.node("GlobalAveragePool", {v.name}, one).name;
  if (gemm) m = w.node("Flatten", {m}, {1, C}, "axis=1").name;
  auto layer = [&](const std::string& x, int64_t in, int64_t out, const Dims& shape, bool bias) {
    std::vector<std::string> args = {x, w.float_const(gemm ? Dims{out, in} : Dims{out, in, 1, 1})};
    if (bias) args.push_back(w.float_const({out}));
    return w.node(gemm ? "Gemm" : "Conv", args, shape, gemm ? "transB=1" : "").name;
  };
  const std::string s = layer(m, C, R, squeezed, true);
  std::string a;
  if (w.chance(0.4)) {
    a = w.node("Relu", {s}, squeezed).name;
  } else if (w.chance(0.6)) {  // SiLU as exporters spell it (recognize_swish makes it one Swish)
    const std::string gate = w.node("Sigmoid", {s}, squeezed, "", true).name;
    a = w.node("Mul", {s, gate}, squeezed).name;
  } else {
    a = w.node("HardSwish", {s}, squeezed).name;
  }
  const std::string e = layer(a, R, C, excited, w.chance(0.5));
  std::string g = w.chance(0.7) ? w.node("Sigmoid", {e}, excited, "", true).name
                                : w.node("HardSigmoid", {e}, excited, "alpha=0.16666667", true).name;
  if (gemm) g = w.node("Reshape", {g, w.int_const({1, C, 1, 1})}, one, "", true).name;
  w.node("Mul", {v.name, g}, v.shape);
  return true;
}

// Conv1d (Whisper's front end, audio and text CNNs) on an [N, C, L] view of x: dense,
// grouped or depthwise, with strides, padding and dilation.
bool conv1d(GraphWriter& w) {
  const Val* v = w.float_of_rank(3, 3);
  if (!v || v->shape[2] < 5) return false;
  const int64_t C = v->shape[1], k = 1 + 2 * w.pick(3), s = 1 + w.pick(2), d = w.chance(0.3) ? 2 : 1, p = w.pick(k);
  const int64_t groups = w.chance(0.4) ? (C % 2 == 0 && w.chance(0.5) ? 2 : C) : 1;
  const int64_t Co = groups * (1 + w.pick(3));
  const int64_t span = v->shape[2] + 2 * p - d * (k - 1) - 1;  // negative: the kernel does not fit
  if (span < 0) return false;
  const int64_t L = span / s + 1;
  std::vector<std::string> args = {v->name, w.float_const({Co, C / groups, k})};
  if (w.chance(0.5)) args.push_back(w.float_const({Co}));
  w.node("Conv", args, {v->shape[0], Co, L},
       str_attrs({groups > 1 ? "group=" + std::to_string(groups) : "", "pads=" + ints_text({p, p}),
                  "strides=" + ints_text({s}), d > 1 ? "dilations=" + ints_text({d}) : ""}));
  return true;
}

// A 2-D Conv on v (NCHW), dense, grouped or depthwise: kernels up to 5, strides, dilation,
// uneven pads, H != W; sometimes a squeeze-and-excitation block, a dense block or inverted
// residual blocks instead, or a pool after a grouped one.
bool conv2d(GraphWriter& w, const Val v) {  // a copy: node() grows the values
  if (v.shape[0] == 1 && w.chance(0.3)) return squeeze_excite(w, v);
  if (w.chance(0.25)) return dense_block(w, v);
  if (w.chance(0.2)) return inverted_residual(w, v);
  const int64_t C = v.shape[1];
  auto kernel = [&] { return w.chance(0.5) ? 3 : w.chance(0.5) ? 1 : 5; };
  const int64_t kh = kernel(), kw = w.chance(0.7) ? kh : kernel();  // each axis its own, sometimes
  const int64_t sh = w.chance(0.3) ? 2 : 1, sw = w.chance(0.8) ? sh : 3 - sh;
  const int64_t dh = kh > 1 && w.chance(0.2) ? 2 : 1, dw = kw > 1 && w.chance(0.8) ? dh : 1;
  auto pad = [&](int64_t k, int64_t d) { return k > 1 && w.chance(0.7) ? d * (k / 2) : 0; };
  const int64_t ph0 = pad(kh, dh), pw0 = pad(kw, dw);
  const int64_t ph1 = w.chance(0.2) ? ph0 + 1 : ph0, pw1 = w.chance(0.2) ? pw0 + 1 : pw0;
  const int64_t groups = w.chance(0.4) ? C : C % 2 == 0 && w.chance(0.2) ? 2 : 1;
  const int64_t Co = groups > 1 ? groups * (1 + w.pick(2)) : 1 + w.pick(16);
  const Dims weight = {Co, C / groups, kh, kw};
  std::vector<std::string> args = {v.name, w.float_const(weight)};
  if (w.chance(0.5)) args.push_back(w.float_const({Co}));
  const int64_t span_h = v.shape[2] + ph0 + ph1 - dh * (kh - 1) - 1, span_w = v.shape[3] + pw0 + pw1 - dw * (kw - 1) - 1;
  if (span_h < 0 || span_w < 0) return false;
  const int64_t H = span_h / sh + 1, W = span_w / sw + 1;
  if (numel({v.shape[0], Co, H, W}) > kMaxElements) return false;
  const Val conv = w.node("Conv", args, {v.shape[0], Co, H, W},
                        str_attrs({groups > 1 ? "group=" + std::to_string(groups) : "",
                                   "pads=" + ints_text({ph0, pw0, ph1, pw1}), "strides=" + ints_text({sh, sw}),
                                   dh > 1 || dw > 1 ? "dilations=" + ints_text({dh, dw}) : ""}));
  if (groups > 1 && w.chance(0.4)) {  // squeeze-and-excitation or a pool after it, as in MobileNets
    Val act = conv;
    if (w.chance(0.5)) act = w.node("Relu", {conv.name}, conv.shape);
    if (w.chance(0.5) && conv.shape[0] == 1) return squeeze_excite(w, act);
    w.node("GlobalAveragePool", {act.name}, {conv.shape[0], Co, 1, 1});
  }
  return true;
}

}  // namespace mono::difftest
