// Unit tests of the elementwise ops: shape rules, reference values (f32, f16, integers,
// bool, broadcasting, NaN) and user errors.
#include <cmath>
#include <limits>

#include "compiler/support/error.h"
#include "tests/unit/op_test_util.h"

namespace mono::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();

Tensor f16(const Shape& s, const std::vector<float>& v) { return Tensor::from_floats(s, v, DType::kF16); }
Tensor i32(const Shape& s, const std::vector<int64_t>& v) { return Tensor::from_ints(s, v, DType::kI32); }
Tensor boolean(const Shape& s, const std::vector<int64_t>& v) {
  return Tensor::from_ints(s, v, DType::kBool);
}

Tensor run1(OpKind op, const std::vector<std::optional<Tensor>>& inputs,
            const std::map<std::string, AttrValue>& attrs = {}, int opset = 20) {
  std::vector<Tensor> out = run_op(op, inputs, attrs, 1, opset);
  EXPECT_EQ(out.size(), 1u);
  return out.at(0);
}

// Applies `f` in float to every value and rounds to `dtype` once: the expected result of a
// float unary op.
template <typename F>
Tensor map_floats(const Tensor& x, F f, DType dtype) {
  std::vector<float> v = x.to_float_vector();
  for (float& e : v) e = static_cast<float>(f(e));
  return Tensor::from_floats(x.shape(), v, dtype);
}

// ---- unary float ops --------------------------------------------------------------------

struct UnaryCase {
  OpKind op;
  double (*f)(double);
};

double sigmoid_ref(double x) { return 1 / (1 + std::exp(-x)); }
double reciprocal_ref(double x) { return 1 / x; }

TEST(UnaryFloat, ValuesF32AndF16) {
  const std::vector<UnaryCase> cases = {
      {OpKind::kExp, [](double x) { return std::exp(x); }},
      {OpKind::kLog, [](double x) { return std::log(x); }},
      {OpKind::kSqrt, [](double x) { return std::sqrt(x); }},
      {OpKind::kErf, [](double x) { return std::erf(x); }},
      {OpKind::kTanh, [](double x) { return std::tanh(x); }},
      {OpKind::kSigmoid, sigmoid_ref},
      {OpKind::kReciprocal, reciprocal_ref},
  };
  const std::vector<float> values = {-3.5f, -1.0f, -0.25f, 0.0f, 0.5f, 1.0f, 2.0f, 7.25f, kNaN, kInf, -kInf};
  const Tensor x32 = f32({11}, values);
  const Tensor x16 = f16({11}, values);
  for (const UnaryCase& c : cases) {
    SCOPED_TRACE(op_name(c.op));
    EXPECT_TRUE(tensors_near(run1(c.op, {x32}), map_floats(x32, c.f, DType::kF32), 2e-6));
    EXPECT_TRUE(tensors_near(run1(c.op, {x16}), map_floats(x16, c.f, DType::kF16), 1e-3));
    // Shape is kept, rank 0 included.
    EXPECT_EQ(infer_op(c.op, {f32({2, 0, 3}, {})})[0], (TensorType{DType::kF32, {2, 0, 3}}));
    EXPECT_EQ(run1(c.op, {Tensor::scalar_float(0.5f)}).shape(), Shape{});
  }
}

TEST(UnaryFloat, SpecialValues) {
  Tensor y = run1(OpKind::kLog, {f32({3}, {0.0f, -1.0f, 1.0f})});
  EXPECT_TRUE(tensors_near(y, f32({3}, {-kInf, kNaN, 0.0f})));
  y = run1(OpKind::kReciprocal, {f32({2}, {0.0f, -0.0f})});
  EXPECT_TRUE(tensors_near(y, f32({2}, {kInf, -kInf})));
  // Sigmoid keeps relative precision for very negative inputs and saturates for positive.
  y = run1(OpKind::kSigmoid, {f32({3}, {-80.0f, 80.0f, 0.0f})});
  EXPECT_NEAR(y.as_double(0) / sigmoid_ref(-80.0), 1.0, 1e-5);
  EXPECT_EQ(y.as_double(1), 1.0);
  EXPECT_EQ(y.as_double(2), 0.5);
}

TEST(UnaryFloat, RejectsIntegersAndBool) {
  for (OpKind op : {OpKind::kExp, OpKind::kLog, OpKind::kSqrt, OpKind::kErf, OpKind::kTanh,
                    OpKind::kSigmoid, OpKind::kReciprocal}) {
    SCOPED_TRACE(op_name(op));
    EXPECT_USER_ERROR(run1(op, {i64({2}, {1, 2})}), "has type i64");
    EXPECT_USER_ERROR(run1(op, {boolean({1}, {1})}), "expected one of f32, f16");
  }
}

TEST(UnaryFloat, SignatureErrors) {
  EXPECT_USER_ERROR(run1(OpKind::kExp, {f32({1}, {1}), f32({1}, {1})}), "takes 1");
  EXPECT_USER_ERROR(run1(OpKind::kTanh, {f32({1}, {1})}, {{"alpha", 1.0f}}),
                    "unsupported attribute 'alpha'");
}

// ---- Abs, Neg -----------------------------------------------------------------------------

TEST(AbsNeg, Floats) {
  Tensor x = f32({2, 3}, {-1.5f, 0.0f, 2.0f, -kInf, kNaN, -0.0f});
  EXPECT_TRUE(tensors_near(run1(OpKind::kAbs, {x}), f32({2, 3}, {1.5f, 0.0f, 2.0f, kInf, kNaN, 0.0f})));
  EXPECT_TRUE(tensors_near(run1(OpKind::kNeg, {x}), f32({2, 3}, {1.5f, -0.0f, -2.0f, kInf, kNaN, 0.0f})));
  // -0.0 becomes +0.0 under Abs (sign bit cleared).
  EXPECT_FALSE(std::signbit(run1(OpKind::kAbs, {x}).data<float>()[5]));
  Tensor h = f16({3}, {-0.1f, 3.0f, -65504.0f});
  EXPECT_TRUE(run1(OpKind::kAbs, {h}).identical(f16({3}, {0.1f, 3.0f, 65504.0f})));
  EXPECT_TRUE(run1(OpKind::kNeg, {h}).identical(f16({3}, {0.1f, -3.0f, 65504.0f})));
}

TEST(AbsNeg, Integers) {
  Tensor x = i64({4}, {-5, 0, 7, kI64Min});
  EXPECT_TRUE(run1(OpKind::kAbs, {x}).identical(i64({4}, {5, 0, 7, kI64Min})));
  EXPECT_TRUE(run1(OpKind::kNeg, {x}).identical(i64({4}, {5, 0, -7, kI64Min})));
  Tensor y = i32({3}, {-5, kI32Max, kI32Min});
  EXPECT_TRUE(run1(OpKind::kAbs, {y}).identical(i32({3}, {5, kI32Max, kI32Min})));
  EXPECT_TRUE(run1(OpKind::kNeg, {y}).identical(i32({3}, {5, -kI32Max, kI32Min})));
}

TEST(AbsNeg, RejectsBool) {
  EXPECT_USER_ERROR(run1(OpKind::kAbs, {boolean({1}, {1})}), "has type bool");
  EXPECT_USER_ERROR(run1(OpKind::kNeg, {boolean({1}, {1})}), "has type bool");
}

// ---- IsNaN, Not, And, Or ----------------------------------------------------------------

TEST(IsNaN, Values) {
  Tensor y = run1(OpKind::kIsNaN, {f32({2, 2}, {1.0f, kNaN, kInf, -kNaN})});
  EXPECT_TRUE(y.identical(boolean({2, 2}, {0, 1, 0, 1})));
  y = run1(OpKind::kIsNaN, {f16({3}, {kNaN, 0.0f, -kInf})});
  EXPECT_TRUE(y.identical(boolean({3}, {1, 0, 0})));
  EXPECT_USER_ERROR(run1(OpKind::kIsNaN, {i64({1}, {1})}), "has type i64");
}

TEST(Not, Values) {
  EXPECT_TRUE(run1(OpKind::kNot, {boolean({3}, {1, 0, 1})}).identical(boolean({3}, {0, 1, 0})));
  EXPECT_TRUE(run1(OpKind::kNot, {boolean({}, {0})}).identical(boolean({}, {1})));
  EXPECT_USER_ERROR(run1(OpKind::kNot, {f32({1}, {1})}), "expected one of bool");
}

TEST(Logical, AndOrBroadcast) {
  Tensor a = boolean({2, 1}, {1, 0});
  Tensor b = boolean({3}, {1, 0, 1});
  EXPECT_TRUE(run1(OpKind::kAnd, {a, b}).identical(boolean({2, 3}, {1, 0, 1, 0, 0, 0})));
  EXPECT_TRUE(run1(OpKind::kOr, {a, b}).identical(boolean({2, 3}, {1, 1, 1, 1, 0, 1})));
  Tensor c = boolean({2, 2}, {1, 1, 0, 0});
  Tensor d = boolean({2, 2}, {1, 0, 1, 0});
  EXPECT_TRUE(run1(OpKind::kAnd, {c, d}).identical(boolean({2, 2}, {1, 0, 0, 0})));
  EXPECT_TRUE(run1(OpKind::kOr, {c, d}).identical(boolean({2, 2}, {1, 1, 1, 0})));
}

TEST(Logical, Errors) {
  EXPECT_USER_ERROR(run1(OpKind::kAnd, {boolean({1}, {1}), i64({1}, {1})}), "input 1 has type i64");
  EXPECT_USER_ERROR(run1(OpKind::kOr, {f32({1}, {1}), boolean({1}, {1})}), "input 0 has type f32");
  EXPECT_USER_ERROR(run1(OpKind::kAnd, {boolean({2}, {1, 1}), boolean({3}, {1, 1, 1})}),
                    "do not broadcast");
}

// ---- comparisons ------------------------------------------------------------------------

TEST(Compare, FloatsWithNaN) {
  Tensor a = f32({4}, {1.0f, 2.0f, kNaN, 3.0f});
  Tensor b = f32({4}, {1.0f, 1.0f, kNaN, 4.0f});
  EXPECT_TRUE(run1(OpKind::kEqual, {a, b}).identical(boolean({4}, {1, 0, 0, 0})));
  EXPECT_TRUE(run1(OpKind::kGreater, {a, b}).identical(boolean({4}, {0, 1, 0, 0})));
  EXPECT_TRUE(run1(OpKind::kGreaterOrEqual, {a, b}).identical(boolean({4}, {1, 1, 0, 0})));
  EXPECT_TRUE(run1(OpKind::kLess, {a, b}).identical(boolean({4}, {0, 0, 0, 1})));
  EXPECT_TRUE(run1(OpKind::kLessOrEqual, {a, b}).identical(boolean({4}, {1, 0, 0, 1})));
}

TEST(Compare, IntegersBroadcast) {
  Tensor a = i64({2, 1}, {1, 5});
  Tensor b = i64({1, 3}, {0, 1, 5});
  EXPECT_EQ(infer_op(OpKind::kLess, {a, b})[0], (TensorType{DType::kBool, {2, 3}}));
  EXPECT_TRUE(run1(OpKind::kEqual, {a, b}).identical(boolean({2, 3}, {0, 1, 0, 0, 0, 1})));
  EXPECT_TRUE(run1(OpKind::kGreater, {a, b}).identical(boolean({2, 3}, {1, 0, 0, 1, 1, 0})));
  EXPECT_TRUE(run1(OpKind::kLessOrEqual, {a, b}).identical(boolean({2, 3}, {0, 1, 1, 0, 0, 1})));
  Tensor c = i32({3}, {kI32Min, 0, kI32Max});
  Tensor z = i32({}, {0});
  EXPECT_TRUE(run1(OpKind::kGreaterOrEqual, {c, z}).identical(boolean({3}, {0, 1, 1})));
  EXPECT_TRUE(run1(OpKind::kLess, {z, c}).identical(boolean({3}, {0, 0, 1})));
}

TEST(Compare, HalfAndBool) {
  // 0.1 and 0.09999 round to the same half: equal in f16.
  Tensor a = f16({2}, {0.1f, 2.0f});
  Tensor b = f16({2}, {0.09999f, 1.0f});
  EXPECT_TRUE(run1(OpKind::kEqual, {a, b}).identical(boolean({2}, {1, 0})));
  EXPECT_TRUE(run1(OpKind::kGreater, {a, b}).identical(boolean({2}, {0, 1})));
  Tensor p = boolean({4}, {0, 0, 1, 1});
  Tensor q = boolean({4}, {0, 1, 0, 1});
  EXPECT_TRUE(run1(OpKind::kEqual, {p, q}).identical(boolean({4}, {1, 0, 0, 1})));
}

TEST(Compare, Errors) {
  EXPECT_USER_ERROR(run1(OpKind::kGreater, {boolean({1}, {1}), boolean({1}, {0})}), "has type bool");
  EXPECT_USER_ERROR(run1(OpKind::kLess, {f32({1}, {1}), i64({1}, {1})}), "differ in type");
  EXPECT_USER_ERROR(run1(OpKind::kEqual, {i64({1}, {1}), i32({1}, {1})}), "differ in type");
  EXPECT_USER_ERROR(run1(OpKind::kLessOrEqual, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2}, {1, 2})}),
                    "do not broadcast");
}

// ---- Sub, Mul, Div ------------------------------------------------------------------------

TEST(Arith, FloatBroadcast) {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = f32({3}, {0.5f, -1, 2});
  EXPECT_TRUE(run1(OpKind::kSub, {a, b}).identical(f32({2, 3}, {0.5f, 3, 1, 3.5f, 6, 4})));
  EXPECT_TRUE(run1(OpKind::kMul, {a, b}).identical(f32({2, 3}, {0.5f, -2, 6, 2, -5, 12})));
  EXPECT_TRUE(run1(OpKind::kDiv, {a, b}).identical(f32({2, 3}, {2, -2, 1.5f, 8, -5, 3})));
  // Scalar on the left, 3-D against 2-D.
  Tensor s = Tensor::scalar_float(10);
  EXPECT_TRUE(run1(OpKind::kSub, {s, b}).identical(f32({3}, {9.5f, 11, 8})));
  Tensor c = f32({2, 1, 2}, {1, 2, 3, 4});
  Tensor d = f32({3, 1}, {1, 10, 100});
  EXPECT_EQ(infer_op(OpKind::kMul, {c, d})[0], (TensorType{DType::kF32, {2, 3, 2}}));
  EXPECT_TRUE(run1(OpKind::kMul, {c, d}).identical(
      f32({2, 3, 2}, {1, 2, 10, 20, 100, 200, 3, 4, 30, 40, 300, 400})));
  // Empty broadcast result.
  EXPECT_EQ(run1(OpKind::kSub, {f32({0, 3}, {}), b}).shape(), (Shape{0, 3}));
}

TEST(Arith, FloatSpecials) {
  Tensor a = f32({4}, {1, -1, 0, kNaN});
  Tensor z = f32({}, {0});
  EXPECT_TRUE(tensors_near(run1(OpKind::kDiv, {a, z}), f32({4}, {kInf, -kInf, kNaN, kNaN})));
  EXPECT_TRUE(tensors_near(run1(OpKind::kMul, {a, f32({}, {kInf})}), f32({4}, {kInf, -kInf, kNaN, kNaN})));
}

TEST(Arith, HalfRoundsOnce) {
  // Computed in float, rounded to half once.
  std::vector<float> av = {1.0f, 0.3f, 1000.0f, 60000.0f};
  std::vector<float> bv = {0.0004f, 3.0f, 0.7f, 2.0f};
  Tensor a = f16({4}, av), b = f16({4}, bv);
  std::vector<float> fa = a.to_float_vector(), fb = b.to_float_vector();
  std::vector<float> sub(4), mul(4), div(4);
  for (int i = 0; i < 4; ++i) {
    sub[i] = fa[i] - fb[i];
    mul[i] = fa[i] * fb[i];
    div[i] = fa[i] / fb[i];
  }
  EXPECT_TRUE(run1(OpKind::kSub, {a, b}).identical(f16({4}, sub)));
  EXPECT_TRUE(run1(OpKind::kMul, {a, b}).identical(f16({4}, mul)));
  EXPECT_TRUE(run1(OpKind::kDiv, {a, b}).identical(f16({4}, div)));
  EXPECT_EQ(run1(OpKind::kMul, {a, b}).as_double(3), kInf);  // 120000 overflows half
}

TEST(Arith, Integers) {
  Tensor a = i64({6}, {7, -7, 7, -7, kI64Min, kI64Max});
  Tensor b = i64({6}, {2, 2, -2, -2, -1, -1});
  EXPECT_TRUE(run1(OpKind::kDiv, {a, b}).identical(i64({6}, {3, -3, -3, 3, kI64Min, -kI64Max})));
  EXPECT_TRUE(run1(OpKind::kSub, {a, b}).identical(
      i64({6}, {5, -9, 9, -5, kI64Min + 1, kI64Min})));  // kI64Max - -1 wraps
  EXPECT_TRUE(run1(OpKind::kMul, {a, b}).identical(i64({6}, {14, -14, -14, 14, kI64Min, -kI64Max})));
  Tensor c = i32({2, 2}, {kI32Max, 9, -9, 100000});
  Tensor d = i32({2}, {2, 4});
  EXPECT_TRUE(run1(OpKind::kDiv, {c, d}).identical(i32({2, 2}, {kI32Max / 2, 2, -4, 25000})));
  EXPECT_TRUE(run1(OpKind::kMul, {c, d}).identical(i32({2, 2}, {-2, 36, -18, 400000})));  // wraps
  EXPECT_TRUE(run1(OpKind::kSub, {c, d}).identical(i32({2, 2}, {kI32Max - 2, 5, -11, 99996})));
}

TEST(Arith, Errors) {
  EXPECT_USER_ERROR(run1(OpKind::kDiv, {i64({2}, {1, 2}), i64({2}, {1, 0})}),
                    "integer division by zero");
  EXPECT_USER_ERROR(run1(OpKind::kDiv, {i32({2}, {1, 2}), i32({}, {0})}), "integer division by zero");
  EXPECT_USER_ERROR(run1(OpKind::kSub, {f32({2}, {1, 2}), f32({3}, {1, 2, 3})}), "do not broadcast");
  EXPECT_USER_ERROR(run1(OpKind::kMul, {f32({2}, {1, 2}), f16({2}, {1, 2})}), "differ in type");
  EXPECT_USER_ERROR(run1(OpKind::kMul, {boolean({1}, {1}), boolean({1}, {1})}), "has type bool");
  EXPECT_USER_ERROR(run1(OpKind::kDiv, {f32({1}, {1})}), "has 1 inputs");
}

// ---- Pow -------------------------------------------------------------------------------

TEST(Pow, Floats) {
  Tensor a = f32({5}, {2, -2, 0.5f, 9, -8});
  Tensor b = f32({5}, {3, 2, -1, 0.5f, 1.0f / 3});
  EXPECT_TRUE(tensors_near(run1(OpKind::kPow, {a, b}), f32({5}, {8, 4, 2, 3, kNaN})));
  // Scalar exponent 2 (the fast path) and broadcasting.
  Tensor two = f32({}, {2});
  EXPECT_TRUE(run1(OpKind::kPow, {a, two}).identical(f32({5}, {4, 4, 0.25f, 81, 64})));
  Tensor col = f32({2, 1}, {1, 3});
  Tensor row = f32({3}, {0, 1, 2});
  EXPECT_TRUE(run1(OpKind::kPow, {col, row}).identical(f32({2, 3}, {1, 1, 1, 1, 3, 9})));
  // Integer exponent on a float base keeps the base's dtype.
  Tensor e = i64({5}, {0, 3, -2, 1, 2});
  EXPECT_EQ(infer_op(OpKind::kPow, {a, e})[0], (TensorType{DType::kF32, {5}}));
  EXPECT_TRUE(run1(OpKind::kPow, {a, e}).identical(f32({5}, {1, -8, 4, 9, 64})));
  Tensor h = f16({3}, {1.1f, 3.0f, 300.0f});
  Tensor he = f16({3}, {2, 0.5f, 2});
  std::vector<float> hv = h.to_float_vector();
  EXPECT_TRUE(run1(OpKind::kPow, {h, he}).identical(
      f16({3}, {hv[0] * hv[0], std::sqrt(3.0f), kInf})));
}

TEST(Pow, Integers) {
  Tensor a = i64({6}, {3, 3, -2, 0, 5, -3});
  Tensor b = i64({6}, {39, 40, 63, 0, 0, 3});
  EXPECT_TRUE(run1(OpKind::kPow, {a, b}).identical(
      i64({6}, {4052555153018976267LL, -6289078614652622815LL, kI64Min, 1, 1, -27})));
  // Negative exponents: truncated 1 / a^-b.
  Tensor c = i64({4}, {1, -1, -1, 2});
  Tensor d = i64({4}, {-5, -3, -2, -1});
  EXPECT_TRUE(run1(OpKind::kPow, {c, d}).identical(i64({4}, {1, -1, 1, 0})));
  // i32 base, i64 exponent: output i32.
  Tensor e = i32({3}, {2, 10, -7});
  Tensor f = i64({}, {3});
  EXPECT_TRUE(run1(OpKind::kPow, {e, f}).identical(i32({3}, {8, 1000, -343})));
  // Integer base, float exponent: truncated toward zero.
  Tensor g = f32({3}, {0.5f, 2.5f, 3});
  EXPECT_TRUE(run1(OpKind::kPow, {i64({3}, {10, 2, -3}), g}).identical(i64({3}, {3, 5, -27})));
}

TEST(Pow, Errors) {
  EXPECT_USER_ERROR(run1(OpKind::kPow, {i64({1}, {0}), i64({1}, {-1})}), "negative power");
  EXPECT_USER_ERROR(run1(OpKind::kPow, {boolean({1}, {1}), i64({1}, {1})}), "has type bool");
  EXPECT_USER_ERROR(run1(OpKind::kPow, {f32({1}, {1}), boolean({1}, {1})}), "input 1 has type bool");
  EXPECT_USER_ERROR(run1(OpKind::kPow, {f32({2}, {1, 2}), f32({3}, {1, 2, 3})}), "do not broadcast");
}

// ---- Max, Min ------------------------------------------------------------------------------

TEST(MaxMin, Variadic) {
  Tensor a = f32({2, 1}, {1, 5});
  Tensor b = f32({3}, {0, 3, 6});
  Tensor c = f32({}, {2});
  EXPECT_EQ(infer_op(OpKind::kMax, {a, b, c})[0], (TensorType{DType::kF32, {2, 3}}));
  EXPECT_TRUE(run1(OpKind::kMax, {a, b, c}).identical(f32({2, 3}, {2, 3, 6, 5, 5, 6})));
  EXPECT_TRUE(run1(OpKind::kMin, {a, b, c}).identical(f32({2, 3}, {0, 1, 1, 0, 2, 2})));
  // One input: a copy.
  EXPECT_TRUE(run1(OpKind::kMax, {b}).identical(b));
  EXPECT_TRUE(run1(OpKind::kMin, {a}).identical(a));
  // First input smaller than the output.
  EXPECT_TRUE(run1(OpKind::kMin, {c, b}).identical(f32({3}, {0, 2, 2})));
}

TEST(MaxMin, NaNPropagates) {
  Tensor a = f32({3}, {kNaN, 1, 2});
  Tensor b = f32({3}, {1, kNaN, 0});
  EXPECT_TRUE(tensors_near(run1(OpKind::kMax, {a, b}), f32({3}, {kNaN, kNaN, 2})));
  EXPECT_TRUE(tensors_near(run1(OpKind::kMin, {a, b}), f32({3}, {kNaN, kNaN, 0})));
  EXPECT_TRUE(tensors_near(run1(OpKind::kMax, {b, a, b}), f32({3}, {kNaN, kNaN, 2})));
}

TEST(MaxMin, IntegersAndHalf) {
  Tensor a = i64({3}, {kI64Min, 0, kI64Max});
  Tensor b = i64({3}, {-1, -1, -1});
  EXPECT_TRUE(run1(OpKind::kMax, {a, b}).identical(i64({3}, {-1, 0, kI64Max})));
  EXPECT_TRUE(run1(OpKind::kMin, {a, b}).identical(i64({3}, {kI64Min, -1, -1})));
  Tensor c = i32({2}, {4, -4});
  EXPECT_TRUE(run1(OpKind::kMax, {c, i32({}, {0}), i32({1}, {-2})}).identical(i32({2}, {4, 0})));
  Tensor h = f16({3}, {0.1f, -2, 7});
  Tensor k = f16({3}, {0.2f, -3, 6});
  EXPECT_TRUE(run1(OpKind::kMax, {h, k}).identical(f16({3}, {0.2f, -2, 7})));
  EXPECT_TRUE(run1(OpKind::kMin, {h, k}).identical(f16({3}, {0.1f, -3, 6})));
}

TEST(MaxMin, Errors) {
  EXPECT_USER_ERROR(run1(OpKind::kMax, {f32({1}, {1}), i64({1}, {1})}), "differ in type");
  EXPECT_USER_ERROR(run1(OpKind::kMin, {f32({2}, {1, 2}), f32({1}, {1}), f32({3}, {1, 2, 3})}),
                    "do not broadcast");
  EXPECT_USER_ERROR(run1(OpKind::kMax, {boolean({1}, {1})}), "has type bool");
  EXPECT_USER_ERROR(run1(OpKind::kMin, {}), "has 0 inputs");
}

// ---- Clip --------------------------------------------------------------------------------

TEST(Clip, Opset6Attributes) {
  Tensor x = f32({5}, {-5, -1, 0, 1, 5});
  EXPECT_TRUE(run1(OpKind::kClip, {x}, {{"min", -2.0f}, {"max", 2.0f}}, 6)
                  .identical(f32({5}, {-2, -1, 0, 1, 2})));
  EXPECT_TRUE(run1(OpKind::kClip, {x}, {{"min", 0.0f}}, 6).identical(f32({5}, {0, 0, 0, 1, 5})));
  // Defaults: the lowest and largest float.
  Tensor y = run1(OpKind::kClip, {f32({3}, {-kInf, 1, kInf})}, {}, 6);
  EXPECT_TRUE(y.identical(f32({3}, {std::numeric_limits<float>::lowest(), 1,
                                    std::numeric_limits<float>::max()})));
  EXPECT_USER_ERROR(run1(OpKind::kClip, {x, f32({}, {0})}, {}, 6), "as attributes");
  EXPECT_USER_ERROR(run1(OpKind::kClip, {i64({1}, {1})}, {}, 6), "has type i64");
}

TEST(Clip, Opset11Inputs) {
  Tensor x = f32({2, 3}, {-5, -1, 0, 1, 5, kNaN});
  Tensor lo = f32({}, {-2});
  Tensor hi = f32({}, {2});
  EXPECT_TRUE(tensors_near(run1(OpKind::kClip, {x, lo, hi}, {}, 11),
                           f32({2, 3}, {-2, -1, 0, 1, 2, kNaN})));
  // Omitted min, or both omitted (no bound: infinities pass).
  EXPECT_TRUE(tensors_near(run1(OpKind::kClip, {x, std::nullopt, hi}, {}, 13),
                           f32({2, 3}, {-5, -1, 0, 1, 2, kNaN})));
  EXPECT_TRUE(tensors_near(run1(OpKind::kClip, {x, lo}, {}, 13), f32({2, 3}, {-2, -1, 0, 1, 5, kNaN})));
  EXPECT_TRUE(run1(OpKind::kClip, {f32({2}, {-kInf, kInf})}, {}, 13).identical(f32({2}, {-kInf, kInf})));
  // min > max: everything but NaN becomes max. Shape [1] bounds are accepted.
  EXPECT_TRUE(tensors_near(run1(OpKind::kClip, {x, f32({1}, {3}), f32({1}, {1})}, {}, 13),
                           f32({2, 3}, {1, 1, 1, 1, 1, kNaN})));
  // f16.
  Tensor h = f16({3}, {-1, 0.3f, 7});
  EXPECT_TRUE(run1(OpKind::kClip, {h, f16({}, {0}), f16({}, {0.25f})}, {}, 13)
                  .identical(f16({3}, {0, 0.25f, 0.25f})));
}

TEST(Clip, Integers) {
  Tensor x = i64({4}, {kI64Min, -3, 3, kI64Max});
  EXPECT_TRUE(run1(OpKind::kClip, {x, i64({}, {-2}), i64({}, {2})}, {}, 12)
                  .identical(i64({4}, {-2, -2, 2, 2})));
  EXPECT_TRUE(run1(OpKind::kClip, {x, std::nullopt, i64({}, {0})}, {}, 12)
                  .identical(i64({4}, {kI64Min, -3, 0, 0})));
  Tensor y = i32({3}, {-9, 0, 9});
  EXPECT_TRUE(run1(OpKind::kClip, {y, i32({}, {-1})}, {}, 13).identical(i32({3}, {-1, 0, 9})));
}

TEST(Clip, Errors) {
  Tensor x = f32({2}, {1, 2});
  EXPECT_USER_ERROR(run1(OpKind::kClip, {i64({1}, {1}), i64({}, {0})}, {}, 11), "has type i64");
  EXPECT_USER_ERROR(run1(OpKind::kClip, {x, f32({2}, {0, 1})}, {}, 13), "min must be a scalar");
  EXPECT_USER_ERROR(run1(OpKind::kClip, {x, f32({}, {0}), i64({}, {1})}, {}, 13), "differ in type");
  EXPECT_USER_ERROR(run1(OpKind::kClip, {x}, {{"min", 0.0f}}, 13), "replaced by an input");
  EXPECT_USER_ERROR(run1(OpKind::kClip, {x}, {{"min", int64_t{0}}}, 6), "must be float");
  EXPECT_USER_ERROR(run1(OpKind::kClip, {boolean({1}, {1})}, {}, 13), "has type bool");
}

// ---- Cast ----------------------------------------------------------------------------------

AttrValue to(int onnx_type) { return AttrValue{int64_t{onnx_type}}; }
constexpr int kFloat = 1, kInt32 = 6, kInt64 = 7, kBool = 9, kFloat16 = 10, kDouble = 11;

TEST(Cast, FloatToInt) {
  Tensor x = f32({8}, {2.7f, -2.7f, 0.5f, -0.0f, 3e9f, -3e9f, kNaN, kInf});
  EXPECT_TRUE(run1(OpKind::kCast, {x}, {{"to", to(kInt32)}})
                  .identical(i32({8}, {2, -2, 0, 0, kI32Max, kI32Min, 0, kI32Max})));
  EXPECT_TRUE(run1(OpKind::kCast, {x}, {{"to", to(kInt64)}})
                  .identical(i64({8}, {2, -2, 0, 0, 3000000000LL, -3000000000LL, 0, kI64Max})));
  Tensor big = f32({2}, {1e19f, -1e19f});
  EXPECT_TRUE(run1(OpKind::kCast, {big}, {{"to", to(kInt64)}}).identical(i64({2}, {kI64Max, kI64Min})));
  Tensor h = f16({3}, {-7.5f, 1000.0f, kNaN});
  EXPECT_TRUE(run1(OpKind::kCast, {h}, {{"to", to(kInt64)}}).identical(i64({3}, {-7, 1000, 0})));
}

TEST(Cast, ToAndFromBool) {
  Tensor x = f32({4}, {0.0f, -0.0f, 0.1f, kNaN});
  EXPECT_TRUE(run1(OpKind::kCast, {x}, {{"to", to(kBool)}}).identical(boolean({4}, {0, 0, 1, 1})));
  EXPECT_TRUE(run1(OpKind::kCast, {i64({3}, {0, -5, 2})}, {{"to", to(kBool)}})
                  .identical(boolean({3}, {0, 1, 1})));
  Tensor b = boolean({2}, {1, 0});
  EXPECT_TRUE(run1(OpKind::kCast, {b}, {{"to", to(kFloat)}}).identical(f32({2}, {1, 0})));
  EXPECT_TRUE(run1(OpKind::kCast, {b}, {{"to", to(kFloat16)}}).identical(f16({2}, {1, 0})));
  EXPECT_TRUE(run1(OpKind::kCast, {b}, {{"to", to(kInt32)}}).identical(i32({2}, {1, 0})));
}

TEST(Cast, IntsAndFloats) {
  Tensor x = i64({3}, {4294967297LL, -1, 16777217});
  EXPECT_TRUE(run1(OpKind::kCast, {x}, {{"to", to(kInt32)}}).identical(i32({3}, {1, -1, 16777217})));
  EXPECT_TRUE(run1(OpKind::kCast, {x}, {{"to", to(kFloat)}})
                  .identical(f32({3}, {4294967296.0f, -1, 16777216.0f})));
  EXPECT_TRUE(run1(OpKind::kCast, {i32({2}, {-3, 70000})}, {{"to", to(kInt64)}})
                  .identical(i64({2}, {-3, 70000})));
  EXPECT_TRUE(run1(OpKind::kCast, {i32({2}, {-3, 70000})}, {{"to", to(kFloat16)}})
                  .identical(f16({2}, {-3, kInf})));
  Tensor f = f32({4}, {0.1f, 65520.0f, -1e-8f, kNaN});
  Tensor h = run1(OpKind::kCast, {f}, {{"to", to(kFloat16)}});
  EXPECT_TRUE(h.identical(f16({4}, {0.1f, kInf, -0.0f, kNaN})));
  EXPECT_TRUE(tensors_near(run1(OpKind::kCast, {h}, {{"to", to(kFloat)}}),
                           f32({4}, {0.0999755859375f, kInf, -0.0f, kNaN}), 0));
  // Same type: a copy; shapes kept (scalar).
  EXPECT_TRUE(run1(OpKind::kCast, {Tensor::scalar_float(1.5f)}, {{"to", to(kFloat)}})
                  .identical(Tensor::scalar_float(1.5f)));
  // saturate is accepted (it only concerns float8).
  EXPECT_TRUE(run1(OpKind::kCast, {f}, {{"to", to(kFloat)}, {"saturate", int64_t{0}}}).identical(f));
}

TEST(Cast, Errors) {
  Tensor x = f32({1}, {1});
  EXPECT_USER_ERROR(run1(OpKind::kCast, {x}, {{"to", to(kDouble)}}), "cannot cast to DOUBLE");
  EXPECT_USER_ERROR(run1(OpKind::kCast, {x}, {{"to", to(8)}}), "STRING");
  EXPECT_USER_ERROR(run1(OpKind::kCast, {x}, {{"to", to(12345)}}), "cannot cast");
  EXPECT_USER_ERROR(run1(OpKind::kCast, {x}), "required attribute 'to' is missing");
  EXPECT_USER_ERROR(run1(OpKind::kCast, {x}, {{"to", 1.0f}}), "must be int");
}

// ---- Gelu ----------------------------------------------------------------------------------

double gelu_ref(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh_ref(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

TEST(Gelu, Values) {
  Tensor x = f32({7}, {-5, -1.5f, -0.1f, 0, 0.7f, 1.5f, 4});
  EXPECT_TRUE(tensors_near(run1(OpKind::kGelu, {x}), map_floats(x, gelu_ref, DType::kF32), 1e-6));
  EXPECT_NEAR(run1(OpKind::kGelu, {f32({1}, {1.5f})}).as_double(0), 1.399789198096713, 1e-6);
  Tensor t = run1(OpKind::kGelu, {x}, {{"approximate", std::string("tanh")}});
  EXPECT_TRUE(tensors_near(t, map_floats(x, gelu_tanh_ref, DType::kF32), 1e-6));
  EXPECT_NEAR(t.as_double(5), 1.3995715769802328, 1e-6);
  EXPECT_TRUE(tensors_near(run1(OpKind::kGelu, {x}, {{"approximate", std::string("none")}}),
                           map_floats(x, gelu_ref, DType::kF32), 1e-6));
  Tensor h = f16({3}, {-1, 0.5f, 2});
  EXPECT_TRUE(tensors_near(run1(OpKind::kGelu, {h}), map_floats(h, gelu_ref, DType::kF16), 1e-3));
  // Accurate in the far negative tail (no cancellation in 1 + erf).
  Tensor tail = f32({2}, {-5, -8});
  EXPECT_TRUE(tensors_near(run1(OpKind::kGelu, {tail}), map_floats(tail, gelu_ref, DType::kF32), 1e-5));
  EXPECT_NEAR(run1(OpKind::kGelu, {tail}).as_double(0) / gelu_ref(-5), 1.0, 1e-5);
  // Available at any opset (produced by pattern recognition).
  EXPECT_TRUE(tensors_near(run1(OpKind::kGelu, {x}, {}, 13), map_floats(x, gelu_ref, DType::kF32), 1e-6));
  EXPECT_TRUE(tensors_near(run1(OpKind::kGelu, {f32({1}, {kNaN})}), f32({1}, {kNaN})));
}

TEST(Gelu, Errors) {
  Tensor x = f32({1}, {1});
  EXPECT_USER_ERROR(run1(OpKind::kGelu, {x}, {{"approximate", std::string("fast")}}),
                    "approximate must be");
  EXPECT_USER_ERROR(run1(OpKind::kGelu, {i64({1}, {1})}), "has type i64");
}

// ---- Where ---------------------------------------------------------------------------------

TEST(Where, ThreeWayBroadcast) {
  Tensor c = boolean({2, 1, 1}, {1, 0});
  Tensor x = f32({1, 3}, {1, 2, 3});
  Tensor y = f32({2, 1}, {-1, -2});
  EXPECT_EQ(infer_op(OpKind::kWhere, {c, x, y})[0], (TensorType{DType::kF32, {2, 2, 3}}));
  EXPECT_TRUE(run1(OpKind::kWhere, {c, x, y}).identical(
      f32({2, 2, 3}, {1, 2, 3, 1, 2, 3, -1, -1, -1, -2, -2, -2})));
  // Scalar operands.
  Tensor c2 = boolean({4}, {1, 0, 0, 1});
  EXPECT_TRUE(run1(OpKind::kWhere, {c2, i64({}, {7}), i64({4}, {0, 1, 2, 3})})
                  .identical(i64({4}, {7, 1, 2, 7})));
}

TEST(Where, SameShapeAllDtypes) {
  Tensor c = boolean({2, 2}, {1, 0, 0, 1});
  EXPECT_TRUE(tensors_near(run1(OpKind::kWhere, {c, f32({2, 2}, {1, 2, 3, kNaN}), f32({2, 2}, {5, kNaN, 7, 8})}),
                           f32({2, 2}, {1, kNaN, 7, kNaN})));
  EXPECT_TRUE(run1(OpKind::kWhere, {c, f16({2, 2}, {0.1f, 2, 3, 4}), f16({2, 2}, {5, 6, 7, 8})})
                  .identical(f16({2, 2}, {0.1f, 6, 7, 4})));
  EXPECT_TRUE(run1(OpKind::kWhere, {c, i32({2, 2}, {1, 2, 3, 4}), i32({2, 2}, {5, 6, 7, 8})})
                  .identical(i32({2, 2}, {1, 6, 7, 4})));
  EXPECT_TRUE(run1(OpKind::kWhere, {c, boolean({2, 2}, {1, 1, 1, 1}), boolean({2, 2}, {0, 0, 0, 0})})
                  .identical(c));
}

TEST(Where, Errors) {
  Tensor x = f32({2}, {1, 2});
  EXPECT_USER_ERROR(run1(OpKind::kWhere, {f32({2}, {1, 0}), x, x}), "input 0 has type f32");
  EXPECT_USER_ERROR(run1(OpKind::kWhere, {boolean({2}, {1, 0}), x, i64({2}, {1, 2})}),
                    "differ in type");
  EXPECT_USER_ERROR(run1(OpKind::kWhere, {boolean({3}, {1, 0, 1}), x, x}), "do not broadcast");
  EXPECT_USER_ERROR(run1(OpKind::kWhere, {boolean({2}, {1, 0}), x}), "has 2 inputs");
}

}  // namespace
}  // namespace mono::testing
