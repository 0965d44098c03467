// Unit tests of the activation and elementwise ops added for the model zoos (trigonometric,
// rounding, Softplus family, the parametric ReLUs, Mod, PRelu, Xor, Sum, Mean): reference
// values against the ONNX definitions written in double, attribute defaults, user errors.
#include <cmath>
#include <functional>
#include <limits>

#include "compiler/support/error.h"
#include "tests/unit/op_test_util.h"

namespace mono::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Tensor run1(OpKind op, const std::vector<std::optional<Tensor>>& inputs,
            const std::map<std::string, AttrValue>& attrs = {}, int opset = 20) {
  std::vector<Tensor> out = run_op(op, inputs, attrs, 1, opset);
  EXPECT_EQ(out.size(), 1u);
  return out.at(0);
}

Tensor map_floats(const Tensor& x, const std::function<double(double)>& f, DType dtype) {
  std::vector<float> v = x.to_float_vector();
  for (float& e : v) e = static_cast<float>(f(e));
  return Tensor::from_floats(x.shape(), v, dtype);
}

double softplus_ref(double x) { return std::log(1 + std::exp(x)); }

struct Case {
  OpKind op;
  std::map<std::string, AttrValue> attrs;
  std::function<double(double)> f;
};

TEST(Activations, ValuesAgainstTheOnnxDefinitionsF32AndF16) {
  const std::vector<Case> cases = {
      {OpKind::kSin, {}, [](double x) { return std::sin(x); }},
      {OpKind::kCos, {}, [](double x) { return std::cos(x); }},
      {OpKind::kTan, {}, [](double x) { return std::tan(x); }},
      {OpKind::kAsin, {}, [](double x) { return std::asin(x); }},
      {OpKind::kAcos, {}, [](double x) { return std::acos(x); }},
      {OpKind::kAtan, {}, [](double x) { return std::atan(x); }},
      {OpKind::kSinh, {}, [](double x) { return std::sinh(x); }},
      {OpKind::kCosh, {}, [](double x) { return std::cosh(x); }},
      {OpKind::kAsinh, {}, [](double x) { return std::asinh(x); }},
      {OpKind::kAcosh, {}, [](double x) { return std::acosh(x); }},
      {OpKind::kAtanh, {}, [](double x) { return std::atanh(x); }},
      {OpKind::kFloor, {}, [](double x) { return std::floor(x); }},
      {OpKind::kCeil, {}, [](double x) { return std::ceil(x); }},
      {OpKind::kRound, {}, [](double x) {  // halves to even
         double r = std::floor(x + 0.5);
         if (r - x == 0.5 && std::fmod(r, 2) != 0) r -= 1;
         return r;
       }},
      {OpKind::kSoftplus, {}, softplus_ref},
      {OpKind::kSoftsign, {}, [](double x) { return x / (1 + std::fabs(x)); }},
      {OpKind::kMish, {}, [](double x) { return x * std::tanh(softplus_ref(x)); }},
      {OpKind::kHardSwish, {}, [](double x) { return x * std::max(0.0, std::min(1.0, x / 6 + 0.5)); }},
      {OpKind::kHardSigmoid, {}, [](double x) { return std::max(0.0, std::min(1.0, 0.2 * x + 0.5)); }},
      {OpKind::kHardSigmoid, {{"alpha", F(0.5f)}, {"beta", F(0.25f)}},
       [](double x) { return std::max(0.0, std::min(1.0, 0.5 * x + 0.25)); }},
      {OpKind::kLeakyRelu, {}, [](double x) { return x < 0 ? 0.01 * x : x; }},
      {OpKind::kLeakyRelu, {{"alpha", F(0.2f)}}, [](double x) { return x < 0 ? 0.2 * x : x; }},
      {OpKind::kElu, {}, [](double x) { return x < 0 ? std::exp(x) - 1 : x; }},
      {OpKind::kElu, {{"alpha", F(2.0f)}}, [](double x) { return x < 0 ? 2 * (std::exp(x) - 1) : x; }},
      {OpKind::kSelu, {}, [](double x) {
         const double a = 1.6732632423543772, g = 1.0507009873554805;
         return x > 0 ? g * x : g * (a * std::exp(x) - a);
       }},
      {OpKind::kCelu, {{"alpha", F(2.0f)}},
       [](double x) { return std::max(0.0, x) + std::min(0.0, 2 * (std::exp(x / 2) - 1)); }},
      {OpKind::kThresholdedRelu, {}, [](double x) { return x > 1 ? x : 0; }},
      {OpKind::kShrink, {}, [](double x) { return x < -0.5 ? x : (x > 0.5 ? x : 0); }},
      {OpKind::kShrink, {{"bias", F(1.5f)}, {"lambd", F(1.5f)}},
       [](double x) { return x < -1.5 ? x + 1.5 : (x > 1.5 ? x - 1.5 : 0); }},
  };
  const std::vector<float> values = {-3.5f, -2.5f, -1.0f, -0.75f, -0.25f, 0.0f, 0.5f, 0.75f, 1.0f, 1.5f, 2.5f, 7.25f};
  const Tensor x32 = f32({12}, values);
  const Tensor x16 = half(x32);
  for (const Case& c : cases) {
    SCOPED_TRACE(op_name(c.op));
    EXPECT_TRUE(tensors_near(run1(c.op, {x32}, c.attrs), map_floats(x32, c.f, DType::kF32), 2e-6));
    EXPECT_TRUE(tensors_near(run1(c.op, {x16}, c.attrs), map_floats(x16, c.f, DType::kF16), 2e-3));
    EXPECT_EQ(infer_op(c.op, {f32({2, 0, 3}, {})}, c.attrs)[0], (TensorType{DType::kF32, {2, 0, 3}}));
    EXPECT_USER_ERROR(infer_op(c.op, {i64({2}, {1, 2})}, c.attrs), "i64");
  }
}

TEST(Activations, SoftplusFamilyAtTheExtremes) {
  // ln(1 + e^x) neither overflows for large x nor rounds to 0 for very negative x.
  Tensor y = run1(OpKind::kSoftplus, {f32({4}, {100.0f, -100.0f, kInf, -kInf})});
  EXPECT_TRUE(tensors_near(y, f32({4}, {100.0f, std::exp(-100.0f), kInf, 0.0f})));
  y = run1(OpKind::kMish, {f32({2}, {100.0f, kNaN})});
  EXPECT_TRUE(tensors_near(y, f32({2}, {100.0f, kNaN})));
  EXPECT_USER_ERROR(infer_op(OpKind::kCelu, {f32({2}, {1, 2})}, {{"alpha", F(0.0f)}}), "alpha");
}

TEST(Activations, SignOfFloatsAndIntegers) {
  EXPECT_TRUE(tensors_near(run1(OpKind::kSign, {f32({4}, {-2.5f, 0.0f, 3.0f, kNaN})}), f32({4}, {-1, 0, 1, kNaN})));
  EXPECT_TRUE(run1(OpKind::kSign, {i64({3}, {-7, 0, 9})}).identical(i64({3}, {-1, 0, 1})));
}

TEST(Mod, IntegersTakeTheDivisorsSignUnlessFmod) {
  const Tensor a = i64({6}, {-4, 7, 5, -5, 3, std::numeric_limits<int64_t>::min()});
  const Tensor b = i64({6}, {7, -3, 2, 0, -1, -1});
  EXPECT_TRUE(run1(OpKind::kMod, {a, b}).identical(i64({6}, {3, -2, 1, 0, 0, 0})));
  EXPECT_TRUE(run1(OpKind::kMod, {a, b}, {{"fmod", I(1)}}).identical(i64({6}, {-4, 1, 1, 0, 0, 0})));
  // Floats: C's fmod, with broadcasting.
  const Tensor y = run1(OpKind::kMod, {f32({2, 2}, {-4.5f, 7.0f, 5.5f, -1.25f}), f32({2}, {2.0f, -3.0f})},
                        {{"fmod", I(1)}});
  EXPECT_TRUE(tensors_near(y, f32({2, 2}, {-0.5f, 1.0f, 1.5f, -1.25f})));
  EXPECT_USER_ERROR(infer_op(OpKind::kMod, {f32({1}, {1}), f32({1}, {1})}), "fmod = 1");
}

TEST(PRelu, SlopeBroadcastsToX) {
  const Tensor x = f32({2, 3}, {-1, 2, -3, 4, -5, 6});
  EXPECT_TRUE(tensors_near(run1(OpKind::kPRelu, {x, f32({3}, {0.5f, 1, 2})}), f32({2, 3}, {-0.5f, 2, -6, 4, -5, 6})));
  EXPECT_TRUE(tensors_near(run1(OpKind::kPRelu, {x, f32({1}, {0.1f})}), f32({2, 3}, {-0.1f, 2, -0.3f, 4, -0.5f, 6})));
  // The output keeps x's shape: a slope that would grow it is refused.
  EXPECT_USER_ERROR(infer_op(OpKind::kPRelu, {f32({3}, {1, 2, 3}), f32({2, 3}, {1, 2, 3, 4, 5, 6})}), "slope");
}

TEST(Variadic, SumMeanAndXor) {
  const Tensor a = f32({2, 2}, {1, 2, 3, 4}), b = f32({2}, {10, 20}), c = f32({1}, {100});
  EXPECT_TRUE(tensors_near(run1(OpKind::kSum, {a, b, c}), f32({2, 2}, {111, 122, 113, 124})));
  EXPECT_TRUE(tensors_near(run1(OpKind::kMean, {a, b, c}), f32({2, 2}, {37, 122.0f / 3, 113.0f / 3, 124.0f / 3})));
  EXPECT_TRUE(tensors_near(run1(OpKind::kSum, {a}), a));
  EXPECT_TRUE(tensors_near(run1(OpKind::kMean, {half(a), half(a)}), half(a), 1e-3));
  const Tensor p = Tensor::from_ints({4}, {0, 0, 1, 1}, DType::kBool), q = Tensor::from_ints({4}, {0, 1, 0, 1}, DType::kBool);
  EXPECT_TRUE(run1(OpKind::kXor, {p, q}).identical(Tensor::from_ints({4}, {0, 1, 1, 0}, DType::kBool)));
  EXPECT_USER_ERROR(infer_op(OpKind::kSum, {i64({1}, {1}), i64({1}, {2})}), "i64");
}

}  // namespace
}  // namespace mono::testing

namespace mono::testing {
namespace {

TEST(Pad, ModesAndCropping) {
  const Tensor x = f32({4}, {1, 2, 3, 4});
  auto pad = [&](const char* mode, std::vector<int64_t> p, int opset = 19) {
    return run_op(OpKind::kPad, {x, i64({2}, p)}, {{"mode", S(mode)}}, 1, opset)[0];
  };
  EXPECT_TRUE(tensors_near(pad("constant", {2, 1}), f32({7}, {0, 0, 1, 2, 3, 4, 0})));
  EXPECT_TRUE(tensors_near(pad("edge", {2, 1}), f32({7}, {1, 1, 1, 2, 3, 4, 4})));
  EXPECT_TRUE(tensors_near(pad("reflect", {3, 2}), f32({9}, {4, 3, 2, 1, 2, 3, 4, 3, 2})));
  EXPECT_TRUE(tensors_near(pad("wrap", {2, 3}), f32({9}, {3, 4, 1, 2, 3, 4, 1, 2, 3})));
  EXPECT_TRUE(tensors_near(pad("constant", {-1, 2}), f32({5}, {2, 3, 4, 0, 0})));  // crop and pad
  // The fill value (input 2), and pads on named axes (input 3, opset 18).
  const Tensor m = f32({2, 2}, {1, 2, 3, 4});
  const auto y = run_op(OpKind::kPad, {m, i64({2}, {1, 0}), f32({}, {9}), i64({1}, {-1})}, {}, 1, 18)[0];
  EXPECT_TRUE(tensors_near(y, f32({2, 3}, {9, 1, 2, 9, 3, 4})));
  EXPECT_USER_ERROR(pad("reflect", {4, 0}), "smaller than its extent");
  EXPECT_USER_ERROR(pad("wrap", {1, 1}, 18), "mode 'wrap'");
  EXPECT_USER_ERROR(pad("constant", {-3, -2}), "below 0");
}

TEST(ArgMax, TiesNaNAndKeepdims) {
  const Tensor x = f32({2, 4}, {1, 5, 5, 2, 3, NAN, 0, NAN});
  auto arg = [&](OpKind op, int64_t last, int64_t keep) {
    return run_op(op, {x}, {{"axis", I(1)}, {"select_last_index", I(last)}, {"keepdims", I(keep)}})[0];
  };
  EXPECT_TRUE(arg(OpKind::kArgMax, 0, 1).identical(i64({2, 1}, {1, 1})));
  EXPECT_TRUE(arg(OpKind::kArgMax, 1, 0).identical(i64({2}, {2, 3})));
  EXPECT_TRUE(arg(OpKind::kArgMin, 0, 0).identical(i64({2}, {0, 1})));  // NaN is the extreme either way
  EXPECT_USER_ERROR(run_op(OpKind::kArgMax, {f32({2, 0}, {})}, {{"axis", I(1)}}), "empty");
}

TEST(IndexOps, TriluTileIsInfSize) {
  const Tensor m = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_TRUE(tensors_near(run1(OpKind::kTrilu, {m, i64({}, {1})}), f32({3, 3}, {0, 2, 3, 0, 0, 6, 0, 0, 0})));
  EXPECT_TRUE(tensors_near(run1(OpKind::kTrilu, {m, i64({}, {-1})}, {{"upper", I(0)}}),
                           f32({3, 3}, {0, 0, 0, 4, 0, 0, 7, 8, 0})));
  EXPECT_TRUE(tensors_near(run1(OpKind::kTile, {f32({1, 2}, {1, 2}), i64({2}, {2, 2})}),
                           f32({2, 4}, {1, 2, 1, 2, 1, 2, 1, 2})));
  EXPECT_USER_ERROR(run1(OpKind::kTile, {f32({2}, {1, 2}), i64({2}, {1, 1})}), "repeats has 2 values");
  const Tensor inf = f32({3}, {INFINITY, -INFINITY, 1});
  EXPECT_TRUE(run1(OpKind::kIsInf, {inf}).identical(Tensor::from_ints({3}, {1, 1, 0}, DType::kBool)));
  EXPECT_TRUE(run1(OpKind::kIsInf, {inf}, {{"detect_negative", I(0)}}).identical(Tensor::from_ints({3}, {1, 0, 0}, DType::kBool)));
  EXPECT_EQ(run1(OpKind::kSize, {m}).as_int(0), 9);
}

}  // namespace
}  // namespace mono::testing
