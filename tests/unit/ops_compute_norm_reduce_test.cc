// Unit tests of the normalizations (BatchNormalization, LayerNormalization), Softmax and
// the reductions (ReduceMax, ReduceMean, ReduceSum): values against naive references written
// here, every attribute and opset form, f16 paths and user errors.
#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/ops/infer.h"
#include "compiler/ops/op.h"
#include "tests/unit/op_test_util.h"

namespace mono::testing {
namespace {

using Attrs = std::map<std::string, AttrValue>;
using Ints = std::vector<int64_t>;

// ---- BatchNormalization -------------------------------------------------------------------

TEST(BatchNormalization, Inference) {
  Tensor x = rand_tensor({2, 3, 4, 5}, 160);
  Tensor scale = f32({3}, {1.0f, 1.5f, -0.5f}), b = f32({3}, {0, 1, 2});
  Tensor mean = f32({3}, {0.1f, -0.2f, 0.3f}), var = f32({3}, {1.0f, 0.5f, 2.0f});
  for (int opset : {7, 9, 15}) {
    Attrs attrs{{"epsilon", F(1e-2f)}};
    if (opset == 7) attrs["spatial"] = I(1);
    auto y = run_op(OpKind::kBatchNormalization, {x, scale, b, mean, var}, attrs, 1, opset);
    std::vector<float> want(x.numel());
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t c = (i / 20) % 3;
      want[i] = static_cast<float>(scale.as_double(c) * (x.as_double(i) - mean.as_double(c)) /
                                       std::sqrt(var.as_double(c) + 1e-2) +
                                   b.as_double(c));
    }
    EXPECT_TRUE(tensors_near(y[0], f32({2, 3, 4, 5}, want), 1e-5)) << "opset " << opset;
  }
  // f16 X with f32 statistics (opset 15 allows differing types).
  auto yh =
      run_op(OpKind::kBatchNormalization, {half(f32({1, 2}, {1, 2})), f32({2}, {2, 3}),
                                           f32({2}, {1, 1}), f32({2}, {0, 1}), f32({2}, {1, 4})});
  EXPECT_TRUE(tensors_near(yh[0], half(f32({1, 2}, {3, 2.5f})), 2e-3));
  // Rank 2 and spatial = 0 (opset 7): per-element statistics.
  auto y0 =
      run_op(OpKind::kBatchNormalization,
             {f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), f32({2, 2}, {1, 1, 1, 2}),
              f32({2, 2}, {0, 0, 0, 1}), f32({2, 2}, {0, 1, 2, 3}), f32({2, 2}, {1, 1, 1, 1})},
             {{"spatial", I(0)}, {"epsilon", F(0.0f)}}, 1, 7);
  EXPECT_TRUE(tensors_near(y0[0], f32({2, 2, 2}, {1, 1, 1, 3, 5, 5, 5, 11})));
}

TEST(BatchNormalization, Errors) {
  Tensor x = rand_tensor({1, 2, 3}, 1), p = f32({2}, {1, 1});
  EXPECT_USER_ERROR(run_op(OpKind::kBatchNormalization, {x, p, p, p, p}, {{"training_mode", I(1)}}),
                    "training_mode");
  EXPECT_USER_ERROR(run_op(OpKind::kBatchNormalization, {x, p, p, p, p}, {}, 3), "output 1");
  EXPECT_USER_ERROR(run_op(OpKind::kBatchNormalization, {x, f32({3}, {1, 1, 1}), p, p, p}),
                    "scale of shape 3");
}

// ---- LayerNormalization ------------------------------------------------------------------

std::vector<float> naive_layer_norm(const Tensor& x, int64_t axis, const std::vector<float>& scale,
                                    const std::vector<float>& bias, float eps,
                                    std::vector<float>* mean, std::vector<float>* inv) {
  const int64_t inner = shape_numel(Shape(x.shape().begin() + axis, x.shape().end()));
  const int64_t outer = x.numel() / inner;
  std::vector<float> y(x.numel());
  for (int64_t o = 0; o < outer; ++o) {
    double m = 0, v = 0;
    for (int64_t i = 0; i < inner; ++i) m += x.as_double(o * inner + i);
    m /= inner;
    for (int64_t i = 0; i < inner; ++i) v += std::pow(x.as_double(o * inner + i) - m, 2);
    const double is = 1 / std::sqrt(v / inner + eps);
    for (int64_t i = 0; i < inner; ++i)
      y[o * inner + i] = static_cast<float>((x.as_double(o * inner + i) - m) * is * scale[i] +
                                            (bias.empty() ? 0 : bias[i]));
    mean->push_back(static_cast<float>(m));
    inv->push_back(static_cast<float>(is));
  }
  return y;
}

TEST(LayerNormalization, AxesBiasAndStatistics) {
  Tensor x = rand_tensor({2, 3, 8}, 170);
  for (int64_t axis : {-1, 1, 0}) {
    const int64_t a = axis < 0 ? axis + 3 : axis;
    Shape norm(x.shape().begin() + a, x.shape().end());
    Tensor scale = rand_tensor(norm, 171), bias = rand_tensor(norm, 172);
    std::vector<float> mean, inv;
    std::vector<float> want =
        naive_layer_norm(x, a, scale.to_float_vector(), bias.to_float_vector(), 1e-3f, &mean, &inv);
    auto y = run_op(OpKind::kLayerNormalization, {x, scale, bias},
                    {{"axis", I(axis)}, {"epsilon", F(1e-3f)}}, 3, 17);
    Shape stat = x.shape();
    for (int64_t i = a; i < 3; ++i) stat[i] = 1;
    EXPECT_TRUE(tensors_near(y[0], f32(x.shape(), want), 1e-5)) << axis;
    EXPECT_TRUE(tensors_near(y[1], f32(stat, mean), 1e-5)) << axis;
    EXPECT_TRUE(tensors_near(y[2], f32(stat, inv), 1e-5)) << axis;
  }
  // No bias, default axis and epsilon, any opset (Mono creates it from patterns).
  Tensor scale = rand_tensor({8}, 173);
  std::vector<float> mean, inv;
  std::vector<float> want = naive_layer_norm(x, 2, scale.to_float_vector(), {}, 1e-5f, &mean, &inv);
  auto y = run_op(OpKind::kLayerNormalization, {x, scale}, {}, 1, 11);
  EXPECT_TRUE(tensors_near(y[0], f32(x.shape(), want), 1e-5));
}

TEST(LayerNormalization, HalfAndBroadcastScale) {
  Tensor x = half(rand_tensor({4, 6}, 180));
  Tensor scale = half(f32({1}, {2.0f}));
  std::vector<float> mean, inv;
  std::vector<float> want =
      naive_layer_norm(x, 1, std::vector<float>(6, 2.0f), {}, 1e-5f, &mean, &inv);
  auto types = infer_op(OpKind::kLayerNormalization, {x, scale}, {}, 3);
  EXPECT_EQ(types[0], (TensorType{DType::kF16, {4, 6}}));
  EXPECT_EQ(types[1], (TensorType{DType::kF32, {4, 1}}));
  auto y = run_op(OpKind::kLayerNormalization, {x, scale}, {}, 3);
  EXPECT_TRUE(tensors_near(y[0], Tensor::from_floats({4, 6}, want, DType::kF16), 2e-3));
  EXPECT_TRUE(tensors_near(y[1], f32({4, 1}, mean), 1e-5));
  EXPECT_USER_ERROR(run_op(OpKind::kLayerNormalization, {x, half(f32({4}, {1, 1, 1, 1}))}),
                    "does not broadcast to the normalized shape");
  EXPECT_USER_ERROR(run_op(OpKind::kLayerNormalization, {x, scale}, {{"axis", I(2)}}),
                    "out of range");
  // stash_type FLOAT16 (10) keeps f16 statistics for f16 X; other stash types are refused.
  types = infer_op(OpKind::kLayerNormalization, {x, scale}, {{"stash_type", I(10)}}, 3);
  EXPECT_EQ(types[2], (TensorType{DType::kF16, {4, 1}}));
  EXPECT_USER_ERROR(infer_op(OpKind::kLayerNormalization, {x, scale}, {{"stash_type", I(11)}}, 3),
                    "stash_type");
}

// ---- Softmax ---------------------------------------------------------------------------------

// Softmax over blocks: element (o, i, j) at (o * n + i) * inner + j, normalized over i.
std::vector<float> naive_softmax(const std::vector<float>& x, int64_t outer, int64_t n,
                                 int64_t inner) {
  std::vector<float> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      double m = -INFINITY, s = 0;
      for (int64_t i = 0; i < n; ++i) m = std::max<double>(m, x[(o * n + i) * inner + j]);
      for (int64_t i = 0; i < n; ++i) s += std::exp(x[(o * n + i) * inner + j] - m);
      for (int64_t i = 0; i < n; ++i)
        y[(o * n + i) * inner + j] =
            static_cast<float>(std::exp(x[(o * n + i) * inner + j] - m) / s);
    }
  return y;
}

TEST(Softmax, AxisForms) {
  Tensor x = rand_tensor({2, 3, 4}, 190);
  std::vector<float> xv = x.to_float_vector();
  // Opset 13: default -1; explicit axes 0, 1.
  EXPECT_TRUE(tensors_near(run_op(OpKind::kSoftmax, {x}, {}, 1, 13)[0],
                           f32({2, 3, 4}, naive_softmax(xv, 6, 4, 1))));
  EXPECT_TRUE(tensors_near(run_op(OpKind::kSoftmax, {x}, {{"axis", I(1)}}, 1, 13)[0],
                           f32({2, 3, 4}, naive_softmax(xv, 2, 3, 4))));
  EXPECT_TRUE(tensors_near(run_op(OpKind::kSoftmax, {x}, {{"axis", I(0)}}, 1, 13)[0],
                           f32({2, 3, 4}, naive_softmax(xv, 1, 2, 12))));
  // Opset 12: default axis 1 coerces to [2, 12] and normalizes over all 12.
  EXPECT_TRUE(tensors_near(run_op(OpKind::kSoftmax, {x}, {}, 1, 12)[0],
                           f32({2, 3, 4}, naive_softmax(xv, 2, 12, 1))));
  EXPECT_TRUE(tensors_near(run_op(OpKind::kSoftmax, {x}, {{"axis", I(0)}}, 1, 11)[0],
                           f32({2, 3, 4}, naive_softmax(xv, 1, 24, 1))));
  EXPECT_TRUE(tensors_near(run_op(OpKind::kSoftmax, {x}, {{"axis", I(-1)}}, 1, 11)[0],
                           f32({2, 3, 4}, naive_softmax(xv, 6, 4, 1))));
  EXPECT_USER_ERROR(run_op(OpKind::kSoftmax, {x}, {{"axis", I(3)}}, 1, 13), "out of range");
}

TEST(Softmax, LargeNumbersAndHalf) {
  auto y = run_op(OpKind::kSoftmax, {f32({2, 4}, {1, 2, 3, 4, 10000, 10001, 10002, 10003})});
  EXPECT_TRUE(tensors_near(y[0],
                           f32({2, 4}, {0.0320586f, 0.08714432f, 0.23688284f, 0.64391428f,
                                        0.0320586f, 0.08714432f, 0.23688284f, 0.64391428f}),
                           1e-5));
  Tensor xh = half(rand_tensor({3, 5}, 191));
  auto yh = run_op(OpKind::kSoftmax, {xh});
  EXPECT_TRUE(tensors_near(
      yh[0], Tensor::from_floats({3, 5}, naive_softmax(xh.to_float_vector(), 3, 5, 1), DType::kF16),
      2e-3));
}

// ---- ReduceMax / ReduceMean / ReduceSum ------------------------------------------------------

// Reduction of a [2,3,4] tensor over `axes` (sorted) in double, keepdims shape: the
// definitions of the ONNX spec, written out naively (LogSumExp without the max shift).
std::vector<double> naive_reduce(const Tensor& x, const std::vector<bool>& red, OpKind op) {
  const Shape& s = x.shape();
  Shape out;
  for (size_t d = 0; d < s.size(); ++d) out.push_back(red[d] ? 1 : s[d]);
  const double init = op == OpKind::kReduceMax ? -INFINITY : op == OpKind::kReduceMin ? INFINITY
                      : op == OpKind::kReduceProd ? 1.0 : 0.0;
  std::vector<double> acc(shape_numel(out), init);
  std::vector<int64_t> cnt(acc.size(), 0);
  const auto ost = strides_of(out);
  for (int64_t i = 0; i < x.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, s);
    int64_t o = 0;
    for (size_t d = 0; d < s.size(); ++d) o += (red[d] ? 0 : idx[d]) * ost[d];
    const double v = x.as_double(i);
    switch (op) {
      case OpKind::kReduceMax: acc[o] = std::max(acc[o], v); break;
      case OpKind::kReduceMin: acc[o] = std::min(acc[o], v); break;
      case OpKind::kReduceProd: acc[o] *= v; break;
      case OpKind::kReduceL1: acc[o] += std::fabs(v); break;
      case OpKind::kReduceL2: case OpKind::kReduceSumSquare: acc[o] += v * v; break;
      case OpKind::kReduceLogSumExp: acc[o] += std::exp(v); break;
      default: acc[o] += v; break;
    }
    ++cnt[o];
  }
  for (size_t i = 0; i < acc.size(); ++i) {
    if (op == OpKind::kReduceMean) acc[i] /= cnt[i];
    if (op == OpKind::kReduceL2) acc[i] = std::sqrt(acc[i]);
    if (op == OpKind::kReduceLogSum || op == OpKind::kReduceLogSumExp) acc[i] = std::log(acc[i]);
  }
  return acc;
}

const std::vector<OpKind> kReduceOps = {
    OpKind::kReduceSum, OpKind::kReduceMean, OpKind::kReduceMax, OpKind::kReduceMin, OpKind::kReduceProd,
    OpKind::kReduceL1, OpKind::kReduceL2, OpKind::kReduceSumSquare, OpKind::kReduceLogSumExp};

TEST(Reduce, AxesFormsAndKeepdims) {
  Tensor x = rand_tensor({2, 3, 4}, 200);
  const std::vector<std::pair<Ints, std::vector<bool>>> axes_cases = {
      {{1}, {false, true, false}},   {{-1}, {false, false, true}}, {{0, 2}, {true, false, true}},
      {{2, 0}, {true, false, true}}, {{}, {true, true, true}},     {{0, 1, 2}, {true, true, true}},
  };
  for (OpKind op : kReduceOps) {
    const int input_opset = op == OpKind::kReduceSum ? 13 : 18;
    for (const auto& [axes, red] : axes_cases) {
      std::vector<double> want = naive_reduce(x, red, op);
      Shape keep, drop;
      for (int d = 0; d < 3; ++d) {
        keep.push_back(red[d] ? 1 : x.shape()[d]);
        if (!red[d]) drop.push_back(x.shape()[d]);
      }
      std::vector<float> wf(want.begin(), want.end());
      for (int64_t keepdims : {1, 0}) {
        const Tensor expect = f32(keepdims ? keep : drop, wf);
        // Axes as an attribute (older opsets).
        Attrs attrs{{"keepdims", I(keepdims)}};
        if (!axes.empty()) attrs["axes"] = Is(axes);
        auto y = run_op(op, {x}, attrs, 1, input_opset - 2);
        EXPECT_TRUE(tensors_near(y[0], expect, 1e-5)) << op_name(op) << " attr " << axes.size();
        // Axes as input 1.
        std::optional<Tensor> ax;
        if (!axes.empty()) ax = i64({static_cast<int64_t>(axes.size())}, axes);
        y = run_op(op, {x, ax}, {{"keepdims", I(keepdims)}}, 1, input_opset);
        EXPECT_TRUE(tensors_near(y[0], expect, 1e-5)) << op_name(op) << " input " << axes.size();
      }
    }
  }
}

TEST(Reduce, LogSumOfPositiveValues) {
  const Tensor x = f32({2, 2}, {0.5f, 2.0f, 4.0f, 8.0f});
  auto y = run_op(OpKind::kReduceLogSum, {x, i64({1}, {1})}, {{"keepdims", I(0)}}, 1, 18);
  EXPECT_TRUE(tensors_near(y[0], f32({2}, {std::log(2.5f), std::log(12.0f)}), 1e-6));
}

TEST(Reduce, LogSumExpDoesNotOverflowAndMinPropagatesNaN) {
  // e^1000 overflows float; max + log(sum(e^(x - max))) does not.
  auto y = run_op(OpKind::kReduceLogSumExp, {f32({2, 2}, {1000.0f, 1000.0f, -INFINITY, -INFINITY})},
                  {{"axes", Is({1})}, {"keepdims", I(0)}}, 1, 17);
  EXPECT_TRUE(tensors_near(y[0], f32({2}, {1000.0f + std::log(2.0f), -INFINITY}), 1e-6));
  y = run_op(OpKind::kReduceMin, {f32({2, 2}, {NAN, 1.0f, 3.0f, -2.0f})}, {{"axes", Is({1})}}, 1, 17);
  EXPECT_TRUE(tensors_near(y[0], f32({2, 1}, {NAN, -2.0f})));
  // Integer Min and Prod are exact in int64.
  y = run_op(OpKind::kReduceMin, {i64({3}, {5, -7, 2})}, {{"keepdims", I(0)}}, 1, 17);
  EXPECT_EQ(y[0].as_int(0), -7);
  y = run_op(OpKind::kReduceProd, {i64({3}, {1 << 20, 1 << 20, 3})}, {{"keepdims", I(0)}}, 1, 17);
  EXPECT_EQ(y[0].as_int(0), int64_t{3} << 40);
  EXPECT_USER_ERROR(run_op(OpKind::kReduceL2, {i64({2}, {3, 4})}, {}, 1, 17), "i64");
}

TEST(Reduce, NoopWithEmptyAxes) {
  Tensor x = rand_tensor({2, 3}, 210);
  for (OpKind op : kReduceOps) {
    auto y =
        run_op(op, {x, i64({0}, {})}, {{"noop_with_empty_axes", I(1)}, {"keepdims", I(0)}}, 1, 18);
    EXPECT_TRUE(y[0].identical(x)) << op_name(op);
    y = run_op(op, {x, std::nullopt}, {{"noop_with_empty_axes", I(1)}}, 1, 18);
    EXPECT_TRUE(y[0].identical(x)) << op_name(op);
    // Without noop, empty axes reduce everything.
    y = run_op(op, {x, i64({0}, {})}, {{"keepdims", I(0)}}, 1, 18);
    EXPECT_EQ(y[0].shape(), Shape{});
  }
}

TEST(Reduce, IntegersHalfAndEmptyReductions) {
  Tensor xi = i64({2, 3}, {1, -5, 3, 7, 2, -9});
  EXPECT_TRUE(
      run_op(OpKind::kReduceSum, {xi, i64({1}, {1})}, {})[0].identical(i64({2, 1}, {-1, 0})));
  EXPECT_TRUE(run_op(OpKind::kReduceMax, {xi, i64({1}, {0})}, {{"keepdims", I(0)}})[0].identical(
      i64({3}, {7, 2, 3})));
  Tensor x32 = xi.cast(DType::kI32);
  EXPECT_TRUE(run_op(OpKind::kReduceMax, {x32}, {})[0].identical(
      Tensor::from_ints({1, 1}, {7}, DType::kI32)));
  EXPECT_TRUE(run_op(OpKind::kReduceMean, {xi}, {{"axes", Is({1})}}, 1, 17)[0].identical(
      i64({2, 1}, {0, 0})));
  Tensor xh = half(f32({2, 2}, {1, 2, 3, 4.5f}));
  EXPECT_TRUE(tensors_near(run_op(OpKind::kReduceMean, {xh}, {{"axes", Is({0})}}, 1, 13)[0],
                           half(f32({1, 2}, {2, 3.25f}))));
  EXPECT_TRUE(tensors_near(run_op(OpKind::kReduceSum, {xh}, {})[0], half(f32({1, 1}, {10.5f}))));
  // Empty reductions: Sum 0, Max the lowest value (-inf), Mean NaN.
  Tensor e = f32({2, 0}, {});
  EXPECT_TRUE(tensors_near(run_op(OpKind::kReduceSum, {e, i64({1}, {1})})[0], f32({2, 1}, {0, 0})));
  Tensor m = run_op(OpKind::kReduceMax, {e, i64({1}, {1})})[0];
  EXPECT_EQ(m.shape(), (Shape{2, 1}));
  EXPECT_EQ(m.as_double(1), -INFINITY);
  EXPECT_TRUE(std::isnan(run_op(OpKind::kReduceMean, {e, i64({1}, {1})})[0].as_double(0)));
  EXPECT_EQ(run_op(OpKind::kReduceMax, {i64({0}, {}), i64({1}, {0})})[0].as_int(0),
            std::numeric_limits<int64_t>::lowest());
  // Reduce a scalar over no axes.
  EXPECT_TRUE(tensors_near(run_op(OpKind::kReduceSum, {f32({}, {3})})[0], f32({}, {3})));
}

TEST(Reduce, AxesInputMustBeKnown) {
  Graph g;
  Value* x = g.add_constant("x", rand_tensor({2, 3}, 1));
  Value* axes = g.add_value("axes", TensorType{DType::kI64, {1}});  // a graph input
  g.inputs.push_back(axes);
  Node* n = g.add_node(OpKind::kReduceSum, "r", {x, axes}, {"y"}, 13);
  EXPECT_THROW(infer_node(*n, {x->constant.get(), nullptr}), NotKnownError);
  EXPECT_USER_ERROR(infer_node(*n, {x->constant.get(), nullptr}), "input 1 (axes) must be known");
}

TEST(Reduce, Errors) {
  Tensor x = rand_tensor({2, 3}, 1);
  EXPECT_USER_ERROR(run_op(OpKind::kReduceSum, {x, i64({1}, {2})}), "out of range");
  EXPECT_USER_ERROR(run_op(OpKind::kReduceSum, {x, i64({2}, {1, -1})}), "listed twice");
  EXPECT_USER_ERROR(run_op(OpKind::kReduceMean, {x, i64({1}, {1})}, {{"axes", Is({0})}}), "both");
  EXPECT_USER_ERROR(run_op(OpKind::kReduceMax, {Tensor(DType::kBool, {2})}), "expected one of");
  EXPECT_USER_ERROR(run_op(OpKind::kReduceMax, {x, f32({1}, {1})}), "axes (input 1) must be i64");
}

}  // namespace
}  // namespace mono::testing
