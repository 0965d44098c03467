// Unit tests of the shape and data-movement ops: shape rules, reference results, every
// supported opset form, and the user errors of bad models.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>

#include "compiler/ops/infer.h"
#include "compiler/ops/op.h"
#include "compiler/support/error.h"
#include "tests/unit/op_test_util.h"

namespace mono::testing {
namespace {

using Attrs = std::map<std::string, AttrValue>;

Tensor i32(const Shape& s, const std::vector<int64_t>& v) { return Tensor::from_ints(s, v, DType::kI32); }
Tensor f16(const Shape& s, const std::vector<float>& v) { return Tensor::from_floats(s, v, DType::kF16); }
Tensor boolean(const Shape& s, const std::vector<int64_t>& v) { return Tensor::from_ints(s, v, DType::kBool); }
Tensor scalar_i64(int64_t v) { return Tensor::scalar_int(v); }
AttrValue ints(std::vector<int64_t> v) { return v; }
AttrValue tensor_attr(const Tensor& t) { return std::make_shared<const Tensor>(t); }

// 0, 1, 2, ... as f32 of the given shape.
Tensor iota(const Shape& s) {
  std::vector<float> v(static_cast<size_t>(shape_numel(s)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return f32(s, v);
}

Tensor run1(OpKind op, const std::vector<std::optional<Tensor>>& inputs, const Attrs& attrs = {},
            int opset = 20) {
  return run_op(op, inputs, attrs, 1, opset)[0];
}

// ---- Constant -----------------------------------------------------------------------------

TEST(Constant, TensorValue) {
  Tensor v = f32({2, 2}, {1, 2, 3, 4});
  Tensor y = run1(OpKind::kConstant, {}, {{"value", tensor_attr(v)}});
  EXPECT_TRUE(y.identical(v));
}

TEST(Constant, ScalarAndListForms) {
  EXPECT_TRUE(run1(OpKind::kConstant, {}, {{"value_float", 2.5f}}).identical(Tensor::scalar_float(2.5f)));
  EXPECT_TRUE(run1(OpKind::kConstant, {}, {{"value_int", int64_t{-7}}}).identical(scalar_i64(-7)));
  EXPECT_TRUE(run1(OpKind::kConstant, {}, {{"value_floats", std::vector<float>{1, 2, 3}}})
                  .identical(f32({3}, {1, 2, 3})));
  EXPECT_TRUE(run1(OpKind::kConstant, {}, {{"value_ints", ints({4, 5})}}).identical(i64({2}, {4, 5})));
  EXPECT_TRUE(run1(OpKind::kConstant, {}, {{"value_ints", ints({})}}).identical(i64({0}, {})));
}

TEST(Constant, Errors) {
  EXPECT_USER_ERROR(run1(OpKind::kConstant, {}), "exactly one");
  EXPECT_USER_ERROR(run1(OpKind::kConstant, {}, {{"value_int", int64_t{1}}, {"value_float", 1.0f}}),
                    "exactly one");
  EXPECT_USER_ERROR(run1(OpKind::kConstant, {}, {{"value_string", std::string("x")}}), "not supported");
  EXPECT_USER_ERROR(run1(OpKind::kConstant, {}, {{"sparse_value", int64_t{1}}}), "unsupported attribute");
}

// ---- ConstantOfShape ----------------------------------------------------------------------

TEST(ConstantOfShape, DefaultIsF32Zero) {
  Tensor y = run1(OpKind::kConstantOfShape, {i64({2}, {2, 3})});
  EXPECT_TRUE(y.identical(f32({2, 3}, {0, 0, 0, 0, 0, 0})));
}

TEST(ConstantOfShape, ValueAttribute) {
  Tensor y = run1(OpKind::kConstantOfShape, {i64({1}, {3})}, {{"value", tensor_attr(i64({1}, {7}))}});
  EXPECT_TRUE(y.identical(i64({3}, {7, 7, 7})));
  Tensor h = run1(OpKind::kConstantOfShape, {i64({2}, {1, 2})}, {{"value", tensor_attr(f16({1}, {1.5f}))}});
  EXPECT_TRUE(h.identical(f16({1, 2}, {1.5f, 1.5f})));
  Tensor b = run1(OpKind::kConstantOfShape, {i64({1}, {2})}, {{"value", tensor_attr(boolean({1}, {1}))}});
  EXPECT_TRUE(b.identical(boolean({2}, {1, 1})));
}

TEST(ConstantOfShape, EmptyShapeAndZeroDims) {
  EXPECT_TRUE(run1(OpKind::kConstantOfShape, {i64({0}, {})}, {{"value", tensor_attr(f32({1}, {4}))}})
                  .identical(Tensor::scalar_float(4)));
  EXPECT_EQ(run1(OpKind::kConstantOfShape, {i64({2}, {0, 5})}).shape(), (Shape{0, 5}));
}

TEST(ConstantOfShape, Errors) {
  EXPECT_USER_ERROR(run1(OpKind::kConstantOfShape, {i64({2}, {2, -1})}), "negative");
  EXPECT_USER_ERROR(run1(OpKind::kConstantOfShape, {i64({1}, {2})}, {{"value", tensor_attr(f32({2}, {1, 2}))}}),
                    "exactly one element");
  EXPECT_USER_ERROR(run1(OpKind::kConstantOfShape, {f32({1}, {2})}), "i64 or i32");
  EXPECT_USER_ERROR(run1(OpKind::kConstantOfShape, {i64({2}, {1 << 30, 1 << 30})}), "too large");
}

TEST(ConstantOfShape, UnknownShapeIsNotKnownError) {
  Graph g;
  Value* s = g.add_value("s", TensorType{DType::kI64, {2}});
  Node* n = g.add_node(OpKind::kConstantOfShape, "c", {s}, {"y"}, 20);
  EXPECT_THROW(infer_node(*n, {nullptr}), NotKnownError);
}

// ---- Shape --------------------------------------------------------------------------------

TEST(Shape, AllDims) {
  Tensor y = run1(OpKind::kShape, {iota({2, 3, 4})});
  EXPECT_TRUE(y.identical(i64({3}, {2, 3, 4})));
  EXPECT_TRUE(run1(OpKind::kShape, {Tensor::scalar_float(1)}).identical(i64({0}, {})));
}

TEST(Shape, StartEnd) {
  Tensor x = iota({2, 3, 4, 5});
  auto shape = [&](Attrs a) { return run1(OpKind::kShape, {x}, a, 15); };
  EXPECT_TRUE(shape({{"start", int64_t{1}}}).identical(i64({3}, {3, 4, 5})));
  EXPECT_TRUE(shape({{"end", int64_t{2}}}).identical(i64({2}, {2, 3})));
  EXPECT_TRUE(shape({{"start", int64_t{1}}, {"end", int64_t{-1}}}).identical(i64({2}, {3, 4})));
  EXPECT_TRUE(shape({{"start", int64_t{-1}}}).identical(i64({1}, {5})));
  EXPECT_TRUE(shape({{"start", int64_t{-10}}}).identical(i64({4}, {2, 3, 4, 5})));
  EXPECT_TRUE(shape({{"end", int64_t{10}}}).identical(i64({4}, {2, 3, 4, 5})));
  EXPECT_TRUE(shape({{"start", int64_t{3}}, {"end", int64_t{1}}}).identical(i64({0}, {})));
}

// ---- Identity / Dropout -------------------------------------------------------------------

TEST(Identity, Copies) {
  for (const Tensor& x : {iota({2, 3}), i32({2}, {1, 2}), boolean({3}, {1, 0, 1}), f16({1}, {3})})
    EXPECT_TRUE(run1(OpKind::kIdentity, {x}).identical(x));
}

TEST(Dropout, OldOpsetAttributes) {
  Tensor x = iota({2, 3});
  for (int opset : {7, 10, 11}) {
    std::vector<Tensor> out = run_op(OpKind::kDropout, {x}, {{"ratio", 0.2f}}, 2, opset);
    EXPECT_TRUE(out[0].identical(x)) << opset;
    DType mask = opset >= 10 ? DType::kBool : DType::kF32;
    EXPECT_EQ(out[1].type(), (TensorType{mask, {2, 3}})) << opset;
    EXPECT_TRUE(out[1].all_equal(1)) << opset;
  }
  EXPECT_TRUE(run1(OpKind::kDropout, {x}, {{"is_test", int64_t{1}}}, 6).identical(x));
}

TEST(Dropout, Opset12Inputs) {
  Tensor x = f16({4}, {1, 2, 3, 4});
  EXPECT_TRUE(run1(OpKind::kDropout, {x}, {}, 13).identical(x));
  std::vector<Tensor> out =
      run_op(OpKind::kDropout, {x, f32({}, {0.3f}), boolean({}, {0})}, {{"seed", int64_t{1}}}, 2, 13);
  EXPECT_TRUE(out[0].identical(x));
  EXPECT_TRUE(out[1].identical(boolean({4}, {1, 1, 1, 1})));
  EXPECT_TRUE(run_op(OpKind::kDropout, {x, std::nullopt, std::nullopt}, {}, 1, 13)[0].identical(x));
}

TEST(Dropout, TrainingModeRejected) {
  Tensor x = iota({2});
  EXPECT_USER_ERROR(run1(OpKind::kDropout, {x, f32({}, {0.5f}), boolean({}, {1})}, {}, 12),
                    "training mode is not supported");
  // Not known at compile time: the shape is still inferred, evaluation rejects it.
  Graph g;
  Value* in = g.add_constant("x", x);
  Value* mode = g.add_value("mode", TensorType{DType::kBool, {}});
  Node* n = g.add_node(OpKind::kDropout, "d", {in, nullptr, mode}, {"y"}, 13);
  infer_node(*n, {in->constant.get(), nullptr, nullptr});
  EXPECT_EQ(n->outputs[0]->type, x.type());
  Tensor on = boolean({}, {1});
  EXPECT_USER_ERROR(evaluate_node(*n, {&x, nullptr, &on}), "training mode is not supported");
}

// ---- Reshape ------------------------------------------------------------------------------

TEST(Reshape, Basic) {
  Tensor x = iota({2, 3, 4});
  Tensor y = run1(OpKind::kReshape, {x, i64({2}, {4, 6})});
  EXPECT_EQ(y.shape(), (Shape{4, 6}));
  EXPECT_TRUE(tensors_near(y, iota({4, 6})));
  EXPECT_EQ(run1(OpKind::kReshape, {x, i32({3}, {-1, 2, 2})}).shape(), (Shape{6, 2, 2}));
  EXPECT_EQ(run1(OpKind::kReshape, {x, i64({3}, {0, -1, 2})}).shape(), (Shape{2, 6, 2}));
  EXPECT_EQ(run1(OpKind::kReshape, {x, i64({3}, {0, 0, -1})}).shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(run1(OpKind::kReshape, {x, i64({1}, {-1})}).shape(), (Shape{24}));
  EXPECT_EQ(run1(OpKind::kReshape, {iota({1}), i64({0}, {})}).shape(), (Shape{}));
}

TEST(Reshape, AllowZero) {
  Tensor x = iota({0, 3});
  EXPECT_EQ(run1(OpKind::kReshape, {x, i64({2}, {3, 0})}, {{"allowzero", int64_t{1}}}, 14).shape(),
            (Shape{3, 0}));
  // Without allowzero (or before opset 14) 0 copies the input dimension.
  EXPECT_EQ(run1(OpKind::kReshape, {iota({2, 3}), i64({2}, {0, 3})}, {}, 14).shape(), (Shape{2, 3}));
  EXPECT_EQ(run1(OpKind::kReshape, {iota({2, 3}), i64({2}, {0, 3})}, {{"allowzero", int64_t{1}}}, 13).shape(),
            (Shape{2, 3}));
  EXPECT_USER_ERROR(run1(OpKind::kReshape, {iota({2, 3}), i64({2}, {0, 6})}, {{"allowzero", int64_t{1}}}, 14),
                    "cannot reshape");
}

TEST(Reshape, Errors) {
  Tensor x = iota({2, 3});
  EXPECT_USER_ERROR(run1(OpKind::kReshape, {x, i64({2}, {4, 2})}), "cannot reshape f32[2,3] (6 elements) to 4x2 (8 elements)");
  EXPECT_USER_ERROR(run1(OpKind::kReshape, {x, i64({2}, {-1, 4})}), "not a multiple");
  EXPECT_USER_ERROR(run1(OpKind::kReshape, {x, i64({2}, {-1, -1})}), "more than one -1");
  EXPECT_USER_ERROR(run1(OpKind::kReshape, {x, i64({2}, {-2, 3})}), "invalid dimension -2");
  EXPECT_USER_ERROR(run1(OpKind::kReshape, {x, i64({3}, {1, 6, 0})}), "has rank 2");
  EXPECT_USER_ERROR(run1(OpKind::kReshape, {x, i64({2, 1}, {6, 1})}), "1-D");
  EXPECT_USER_ERROR(run1(OpKind::kReshape, {x, f32({2}, {6, 1})}), "i64 or i32");
  EXPECT_USER_ERROR(run1(OpKind::kReshape, {x, i64({3}, {int64_t{1} << 40, int64_t{1} << 40, -1})}),
                    "too large");
}

TEST(Reshape, ShapeMustBeKnown) {
  Graph g;
  Value* x = g.add_value("x", TensorType{DType::kF32, {2, 3}});
  Value* s = g.add_value("s", TensorType{DType::kI64, {2}});
  Node* n = g.add_node(OpKind::kReshape, "r", {x, s}, {"y"}, 20);
  EXPECT_THROW(infer_node(*n, {nullptr, nullptr}), NotKnownError);
}

// ---- Flatten ------------------------------------------------------------------------------

TEST(Flatten, Axes) {
  Tensor x = iota({2, 3, 4, 5});
  auto flat = [&](int64_t axis, int opset = 13) {
    return run1(OpKind::kFlatten, {x}, {{"axis", axis}}, opset).shape();
  };
  EXPECT_EQ(run1(OpKind::kFlatten, {x}).shape(), (Shape{2, 60}));
  EXPECT_EQ(flat(0), (Shape{1, 120}));
  EXPECT_EQ(flat(2), (Shape{6, 20}));
  EXPECT_EQ(flat(4), (Shape{120, 1}));
  EXPECT_EQ(flat(-1), (Shape{24, 5}));
  EXPECT_EQ(flat(-4), (Shape{1, 120}));
  EXPECT_EQ(flat(3, 9), (Shape{24, 5}));
  EXPECT_TRUE(tensors_near(run1(OpKind::kFlatten, {x}), iota({2, 60})));
  EXPECT_USER_ERROR(flat(5), "out of range");
  EXPECT_USER_ERROR(flat(-5), "out of range");
}

// ---- Squeeze / Unsqueeze ------------------------------------------------------------------

TEST(Squeeze, AxesInput) {
  Tensor x = iota({1, 3, 1, 2});
  EXPECT_EQ(run1(OpKind::kSqueeze, {x, i64({1}, {0})}).shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(run1(OpKind::kSqueeze, {x, i64({2}, {-2, 0})}).shape(), (Shape{3, 2}));
  EXPECT_EQ(run1(OpKind::kSqueeze, {x}).shape(), (Shape{3, 2}));
  EXPECT_EQ(run1(OpKind::kSqueeze, {x, std::nullopt}).shape(), (Shape{3, 2}));
  EXPECT_TRUE(tensors_near(run1(OpKind::kSqueeze, {x}), iota({3, 2})));
  EXPECT_EQ(run1(OpKind::kSqueeze, {iota({1, 1})}).shape(), (Shape{}));
}

TEST(Squeeze, AxesAttribute) {
  Tensor x = iota({1, 3, 1});
  EXPECT_EQ(run1(OpKind::kSqueeze, {x}, {{"axes", ints({2})}}, 11).shape(), (Shape{1, 3}));
  EXPECT_EQ(run1(OpKind::kSqueeze, {x}, {{"axes", ints({-1, 0})}}, 11).shape(), (Shape{3}));
  EXPECT_EQ(run1(OpKind::kSqueeze, {x}, {}, 7).shape(), (Shape{3}));
}

TEST(Squeeze, Errors) {
  Tensor x = iota({1, 3});
  EXPECT_USER_ERROR(run1(OpKind::kSqueeze, {x, i64({1}, {1})}), "its size is not 1");
  EXPECT_USER_ERROR(run1(OpKind::kSqueeze, {x, i64({2}, {0, -2})}), "repeated");
  EXPECT_USER_ERROR(run1(OpKind::kSqueeze, {x, i64({1}, {2})}), "out of range");
  EXPECT_USER_ERROR(run1(OpKind::kSqueeze, {x}, {{"axes", ints({1})}}, 11), "its size is not 1");
}

TEST(Unsqueeze, AxesInput) {
  Tensor x = iota({3, 4});
  EXPECT_EQ(run1(OpKind::kUnsqueeze, {x, i64({1}, {0})}).shape(), (Shape{1, 3, 4}));
  EXPECT_EQ(run1(OpKind::kUnsqueeze, {x, i64({1}, {2})}).shape(), (Shape{3, 4, 1}));
  EXPECT_EQ(run1(OpKind::kUnsqueeze, {x, i64({1}, {-1})}).shape(), (Shape{3, 4, 1}));
  EXPECT_EQ(run1(OpKind::kUnsqueeze, {x, i64({3}, {0, 4, 2})}).shape(), (Shape{1, 3, 1, 4, 1}));
  EXPECT_EQ(run1(OpKind::kUnsqueeze, {x, i64({2}, {3, 1})}).shape(), (Shape{3, 1, 4, 1}));
  EXPECT_EQ(run1(OpKind::kUnsqueeze, {Tensor::scalar_float(2), i64({1}, {0})}).shape(), (Shape{1}));
  EXPECT_TRUE(tensors_near(run1(OpKind::kUnsqueeze, {x, i64({1}, {1})}), iota({3, 1, 4})));
}

TEST(Unsqueeze, AxesAttribute) {
  Tensor x = iota({3});
  EXPECT_EQ(run1(OpKind::kUnsqueeze, {x}, {{"axes", ints({0, 2})}}, 11).shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(run1(OpKind::kUnsqueeze, {x}, {{"axes", ints({1})}}, 7).shape(), (Shape{3, 1}));
}

TEST(Unsqueeze, Errors) {
  Tensor x = iota({3});
  EXPECT_USER_ERROR(run1(OpKind::kUnsqueeze, {x, i64({2}, {0, 0})}), "repeated");
  EXPECT_USER_ERROR(run1(OpKind::kUnsqueeze, {x, i64({2}, {1, -2})}), "repeated");
  EXPECT_USER_ERROR(run1(OpKind::kUnsqueeze, {x, i64({1}, {2})}), "out of range");
  EXPECT_USER_ERROR(run1(OpKind::kUnsqueeze, {x}), "input 1 (axes) is required");
  EXPECT_USER_ERROR(run1(OpKind::kUnsqueeze, {x}, {}, 11), "'axes' is required");
}

// ---- Expand -------------------------------------------------------------------------------

TEST(Expand, Broadcasts) {
  Tensor x = f32({3, 1}, {1, 2, 3});
  Tensor y = run1(OpKind::kExpand, {x, i64({2}, {3, 2})});
  EXPECT_TRUE(y.identical(f32({3, 2}, {1, 1, 2, 2, 3, 3})));
  // Bidirectional: a 1 in the shape keeps the input's dimension; ranks may differ.
  y = run1(OpKind::kExpand, {x, i64({3}, {2, 1, 2})});
  EXPECT_TRUE(y.identical(f32({2, 3, 2}, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3})));
  EXPECT_TRUE(run1(OpKind::kExpand, {x, i64({1}, {1})}).identical(x));
  EXPECT_TRUE(run1(OpKind::kExpand, {i64({}, {5}), i64({1}, {3})}).identical(i64({3}, {5, 5, 5})));
  EXPECT_EQ(run1(OpKind::kExpand, {x, i64({2}, {3, 0})}).shape(), (Shape{3, 0}));
  EXPECT_TRUE(run1(OpKind::kExpand, {boolean({1, 2}, {1, 0}), i64({2}, {2, 2})})
                  .identical(boolean({2, 2}, {1, 0, 1, 0})));
}

TEST(Expand, Errors) {
  Tensor x = f32({3, 1}, {1, 2, 3});
  EXPECT_USER_ERROR(run1(OpKind::kExpand, {x, i64({2}, {2, 2})}), "do not broadcast");
  EXPECT_USER_ERROR(run1(OpKind::kExpand, {x, i64({2}, {3, -2})}), "negative");
  EXPECT_USER_ERROR(run1(OpKind::kExpand, {f32({1}, {1}), i64({2}, {int64_t{1} << 31, int64_t{1} << 31})}),
                    "too large");
}

// ---- Concat -------------------------------------------------------------------------------

TEST(Concat, Axes) {
  Tensor a = f32({2, 2}, {1, 2, 3, 4});
  Tensor b = f32({2, 1}, {5, 6});
  Tensor c = f32({1, 2}, {7, 8});
  EXPECT_TRUE(run1(OpKind::kConcat, {a, b}, {{"axis", int64_t{1}}}).identical(f32({2, 3}, {1, 2, 5, 3, 4, 6})));
  EXPECT_TRUE(run1(OpKind::kConcat, {a, b}, {{"axis", int64_t{-1}}}).identical(f32({2, 3}, {1, 2, 5, 3, 4, 6})));
  EXPECT_TRUE(run1(OpKind::kConcat, {a, c, a}, {{"axis", int64_t{0}}})
                  .identical(f32({5, 2}, {1, 2, 3, 4, 7, 8, 1, 2, 3, 4})));
  EXPECT_TRUE(run1(OpKind::kConcat, {a}, {{"axis", int64_t{0}}}, 7).identical(a));
  EXPECT_TRUE(run1(OpKind::kConcat, {i64({1}, {1}), i64({0}, {}), i64({2}, {2, 3})}, {{"axis", int64_t{0}}})
                  .identical(i64({3}, {1, 2, 3})));
  EXPECT_TRUE(run1(OpKind::kConcat, {f32({2, 0}, {}), a}, {{"axis", int64_t{1}}}).identical(a));
}

TEST(Concat, Errors) {
  Tensor a = f32({2, 2}, {1, 2, 3, 4});
  EXPECT_USER_ERROR(run1(OpKind::kConcat, {a, f32({1, 3}, {1, 2, 3})}, {{"axis", int64_t{0}}}), "does not match");
  EXPECT_USER_ERROR(run1(OpKind::kConcat, {a, f32({4}, {1, 2, 3, 4})}, {{"axis", int64_t{0}}}), "does not match");
  EXPECT_USER_ERROR(run1(OpKind::kConcat, {a, i64({2, 2}, {1, 2, 3, 4})}, {{"axis", int64_t{0}}}), "differ in type");
  EXPECT_USER_ERROR(run1(OpKind::kConcat, {a, a}, {{"axis", int64_t{2}}}), "out of range");
  EXPECT_USER_ERROR(run1(OpKind::kConcat, {a, a}), "required attribute 'axis'");
}

// ---- Split --------------------------------------------------------------------------------

TEST(Split, EqualParts) {
  Tensor x = iota({2, 6});
  std::vector<Tensor> out = run_op(OpKind::kSplit, {x}, {{"axis", int64_t{1}}}, 3, 13);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[0].identical(f32({2, 2}, {0, 1, 6, 7})));
  EXPECT_TRUE(out[1].identical(f32({2, 2}, {2, 3, 8, 9})));
  EXPECT_TRUE(out[2].identical(f32({2, 2}, {4, 5, 10, 11})));
  out = run_op(OpKind::kSplit, {x}, {}, 2, 11);
  EXPECT_TRUE(out[0].identical(f32({1, 6}, {0, 1, 2, 3, 4, 5})));
  EXPECT_USER_ERROR(run_op(OpKind::kSplit, {x}, {{"axis", int64_t{1}}}, 4, 13), "equal parts");
}

TEST(Split, AttributeBeforeOpset13) {
  Tensor x = iota({6});
  std::vector<Tensor> out = run_op(OpKind::kSplit, {x}, {{"split", ints({2, 4})}}, 2, 11);
  EXPECT_TRUE(out[0].identical(f32({2}, {0, 1})));
  EXPECT_TRUE(out[1].identical(f32({4}, {2, 3, 4, 5})));
  EXPECT_USER_ERROR(run_op(OpKind::kSplit, {x}, {{"split", ints({2, 3})}}, 2, 11), "sum to 5");
}

TEST(Split, InputFromOpset13) {
  Tensor x = iota({2, 5});
  std::vector<Tensor> out = run_op(OpKind::kSplit, {x, i64({3}, {1, 0, 4})}, {{"axis", int64_t{-1}}}, 3, 13);
  EXPECT_TRUE(out[0].identical(f32({2, 1}, {0, 5})));
  EXPECT_EQ(out[1].shape(), (Shape{2, 0}));
  EXPECT_TRUE(out[2].identical(f32({2, 4}, {1, 2, 3, 4, 6, 7, 8, 9})));
  // Omitted input: equal parts.
  out = run_op(OpKind::kSplit, {x, std::nullopt}, {}, 2, 18);
  EXPECT_TRUE(out[1].identical(f32({1, 5}, {5, 6, 7, 8, 9})));
  EXPECT_USER_ERROR(run_op(OpKind::kSplit, {x, i64({2}, {1, 4})}, {{"axis", int64_t{1}}}, 3, 13), "2 entries for 3 outputs");
  EXPECT_USER_ERROR(run_op(OpKind::kSplit, {x, i64({2}, {-1, 6})}, {{"axis", int64_t{1}}}, 2, 13), "negative");
}

TEST(Split, NumOutputsOpset18) {
  Tensor x = iota({7});
  std::vector<Tensor> out = run_op(OpKind::kSplit, {x}, {{"num_outputs", int64_t{3}}}, 3, 18);
  EXPECT_TRUE(out[0].identical(f32({3}, {0, 1, 2})));
  EXPECT_TRUE(out[1].identical(f32({3}, {3, 4, 5})));
  EXPECT_TRUE(out[2].identical(f32({1}, {6})));
  out = run_op(OpKind::kSplit, {iota({6})}, {{"num_outputs", int64_t{4}}}, 4, 18);
  EXPECT_EQ(out[3].shape(), (Shape{0}));
  EXPECT_USER_ERROR(run_op(OpKind::kSplit, {iota({7})}, {{"num_outputs", int64_t{5}}}, 5, 18), "cannot be split");
  EXPECT_USER_ERROR(run_op(OpKind::kSplit, {x}, {{"num_outputs", int64_t{2}}}, 3, 18), "num_outputs is 2");
  EXPECT_USER_ERROR(run_op(OpKind::kSplit, {x, i64({2}, {3, 4})}, {{"num_outputs", int64_t{2}}}, 2, 18),
                    "both set");
}

TEST(Split, UnwantedOutput) {
  Graph g;
  Value* x = g.add_constant("x", iota({4}));
  Node* n = g.add_node(OpKind::kSplit, "s", {x}, {"a", "", "c"}, 18);
  n->attrs["num_outputs"] = int64_t{3};  // parts of 2, 2 and 0
  check_node_signature(*n);
  infer_node(*n, {x->constant.get()});
  std::vector<Tensor> out = evaluate_node(*n, {x->constant.get()});
  EXPECT_TRUE(out[0].identical(f32({2}, {0, 1})));
  EXPECT_TRUE(out[2].identical(f32({0}, {})));
}

// ---- Slice --------------------------------------------------------------------------------

TEST(Slice, Inputs) {
  Tensor x = iota({3, 4});
  // rows 1..2, columns 0..2 step 2
  Tensor y = run1(OpKind::kSlice, {x, i64({2}, {1, 0}), i64({2}, {3, 3}), i64({2}, {0, 1}), i64({2}, {1, 2})});
  EXPECT_TRUE(y.identical(f32({2, 2}, {4, 6, 8, 10})));
  // Default axes and steps.
  y = run1(OpKind::kSlice, {x, i64({1}, {1}), i64({1}, {2})});
  EXPECT_TRUE(y.identical(f32({1, 4}, {4, 5, 6, 7})));
  // Negative axes, starts and ends; i32 inputs.
  y = run1(OpKind::kSlice, {x, i32({1}, {-3}), i32({1}, {-1}), i32({1}, {-1})});
  EXPECT_TRUE(y.identical(f32({3, 2}, {1, 2, 5, 6, 9, 10})));
  // Omitted optional axes with steps given.
  y = run1(OpKind::kSlice, {x, i64({2}, {0, 0}), i64({2}, {3, 4}), std::nullopt, i64({2}, {2, 3})});
  EXPECT_TRUE(y.identical(f32({2, 2}, {0, 3, 8, 11})));
}

TEST(Slice, ClampsAndNegativeSteps) {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  Tensor x = iota({5});
  auto slice = [&](int64_t s, int64_t e, int64_t st) {
    return run1(OpKind::kSlice, {x, i64({1}, {s}), i64({1}, {e}), i64({1}, {0}), i64({1}, {st})});
  };
  EXPECT_TRUE(slice(1, kMax, 1).identical(f32({4}, {1, 2, 3, 4})));
  EXPECT_TRUE(slice(-100, 2, 1).identical(f32({2}, {0, 1})));
  EXPECT_TRUE(slice(10, 20, 1).identical(f32({0}, {})));
  EXPECT_TRUE(slice(-1, kMin, -1).identical(f32({5}, {4, 3, 2, 1, 0})));
  EXPECT_TRUE(slice(kMax, kMin, -2).identical(f32({3}, {4, 2, 0})));
  EXPECT_TRUE(slice(3, 0, -1).identical(f32({3}, {3, 2, 1})));
  EXPECT_TRUE(slice(3, -100, -3).identical(f32({2}, {3, 0})));
  EXPECT_TRUE(slice(0, 3, -1).identical(f32({0}, {})));
  EXPECT_TRUE(slice(0, 5, kMax).identical(f32({1}, {0})));
  EXPECT_TRUE(slice(4, -6, kMin).identical(f32({1}, {4})));
  Tensor empty = iota({0});
  EXPECT_EQ(run1(OpKind::kSlice, {empty, i64({1}, {0}), i64({1}, {kMin}), i64({1}, {0}), i64({1}, {-1})})
                .shape(), (Shape{0}));
}

TEST(Slice, AttributesBeforeOpset10) {
  Tensor x = iota({2, 4});
  Tensor y = run1(OpKind::kSlice, {x}, {{"starts", ints({1})}, {"ends", ints({1000})}, {"axes", ints({1})}}, 9);
  EXPECT_TRUE(y.identical(f32({2, 3}, {1, 2, 3, 5, 6, 7})));
  y = run1(OpKind::kSlice, {x}, {{"starts", ints({0, -2})}, {"ends", ints({1, -1})}}, 7);
  EXPECT_TRUE(y.identical(f32({1, 1}, {2})));
  EXPECT_USER_ERROR(run1(OpKind::kSlice, {x}, {{"starts", ints({0})}}, 9), "'ends' is required");
}

TEST(Slice, Errors) {
  Tensor x = iota({3, 4});
  EXPECT_USER_ERROR(run1(OpKind::kSlice, {x, i64({1}, {0}), i64({1}, {1}), i64({1}, {0}), i64({1}, {0})}), "is 0");
  EXPECT_USER_ERROR(run1(OpKind::kSlice, {x, i64({2}, {0, 0}), i64({1}, {1})}), "ends has 1");
  EXPECT_USER_ERROR(run1(OpKind::kSlice, {x, i64({2}, {0, 0}), i64({2}, {1, 1}), i64({2}, {1, -1})}), "repeated");
  EXPECT_USER_ERROR(run1(OpKind::kSlice, {x, i64({1}, {0}), i64({1}, {1}), i64({1}, {2})}), "out of range");
  EXPECT_USER_ERROR(run1(OpKind::kSlice, {x, i64({3}, {0, 0, 0}), i64({3}, {1, 1, 1})}), "rank 2");
  EXPECT_USER_ERROR(run1(OpKind::kSlice, {x, f32({1}, {0}), i64({1}, {1})}), "i64 or i32");
}

// ---- Gather -------------------------------------------------------------------------------

TEST(Gather, Axis0) {
  Tensor data = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor y = run1(OpKind::kGather, {data, i64({2, 2}, {0, 1, 2, -1})});
  EXPECT_TRUE(y.identical(f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 5, 6})));
  EXPECT_TRUE(run1(OpKind::kGather, {data, i64({}, {1})}).identical(f32({2}, {3, 4})));
}

TEST(Gather, OtherAxes) {
  Tensor data = iota({2, 3, 2});
  Tensor y = run1(OpKind::kGather, {data, i32({2}, {2, 0})}, {{"axis", int64_t{1}}});
  EXPECT_TRUE(y.identical(f32({2, 2, 2}, {4, 5, 0, 1, 10, 11, 6, 7})));
  y = run1(OpKind::kGather, {data, i64({}, {-1})}, {{"axis", int64_t{-1}}});
  EXPECT_TRUE(y.identical(f32({2, 3}, {1, 3, 5, 7, 9, 11})));
  EXPECT_TRUE(run1(OpKind::kGather, {i64({3}, {7, 8, 9}), i64({0}, {})}).identical(i64({0}, {})));
}

TEST(Gather, Errors) {
  Tensor data = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_USER_ERROR(run1(OpKind::kGather, {data, i64({2}, {0, 3})}), "index 3 is out of range for axis 0 of size 3");
  EXPECT_USER_ERROR(run1(OpKind::kGather, {data, i64({1}, {-4})}), "index -4");
  // Known indices are checked by the shape rule already.
  EXPECT_USER_ERROR(infer_op(OpKind::kGather, {data, i64({1}, {3})}), "index 3 is out of range");
  // Indices known only at run time: checked when evaluated.
  Graph g;
  Value* d = g.add_constant("d", data);
  Value* idx = g.add_value("i", TensorType{DType::kI64, {1}});
  Node* n = g.add_node(OpKind::kGather, "g", {d, idx}, {"y"}, 13);
  infer_node(*n, {d->constant.get(), nullptr});
  EXPECT_EQ(n->outputs[0]->type, (TensorType{DType::kF32, {1, 2}}));
  Tensor bad = i64({1}, {1000000});
  EXPECT_USER_ERROR(evaluate_node(*n, {&data, &bad}), "index 1000000 is out of range");
  EXPECT_USER_ERROR(run1(OpKind::kGather, {data, i64({1}, {std::numeric_limits<int64_t>::min()})}), "out of range");
  EXPECT_USER_ERROR(run1(OpKind::kGather, {data, f32({1}, {0})}), "expected one of i64, i32");
  EXPECT_USER_ERROR(run1(OpKind::kGather, {data, i64({1}, {0})}, {{"axis", int64_t{2}}}), "out of range for rank 2");
}

TEST(GatherElements, Basic) {
  Tensor data = f32({2, 2}, {1, 2, 3, 4});
  Tensor y = run1(OpKind::kGatherElements, {data, i64({2, 2}, {0, 0, 1, 0})}, {{"axis", int64_t{1}}});
  EXPECT_TRUE(y.identical(f32({2, 2}, {1, 1, 4, 3})));
  Tensor d3 = iota({3, 3});
  y = run1(OpKind::kGatherElements, {d3, i32({2, 3}, {1, 2, 0, 2, 0, -1})});
  EXPECT_TRUE(y.identical(f32({2, 3}, {3, 7, 2, 6, 1, 8})));
  // Indices smaller than the data off the axis, larger along it.
  y = run1(OpKind::kGatherElements, {d3, i64({1, 4}, {0, 1, 2, -3})}, {{"axis", int64_t{-1}}});
  EXPECT_TRUE(y.identical(f32({1, 4}, {0, 1, 2, 0})));
}

TEST(GatherElements, Errors) {
  Tensor data = f32({2, 2}, {1, 2, 3, 4});
  EXPECT_USER_ERROR(run1(OpKind::kGatherElements, {data, i64({2, 2}, {0, 2, 0, 0})}, {{"axis", int64_t{1}}}),
                    "index 2 is out of range for axis 1 of size 2");
  EXPECT_USER_ERROR(run1(OpKind::kGatherElements, {data, i64({2}, {0, 0})}), "rank");
  EXPECT_USER_ERROR(run1(OpKind::kGatherElements, {data, i64({1, 3}, {0, 0, 0})}), "exceed");
}

// ---- CumSum -------------------------------------------------------------------------------

TEST(CumSum, Forms) {
  Tensor x = f32({5}, {1, 2, 3, 4, 5});
  Tensor axis = scalar_i64(0);
  EXPECT_TRUE(run1(OpKind::kCumSum, {x, axis}).identical(f32({5}, {1, 3, 6, 10, 15})));
  EXPECT_TRUE(run1(OpKind::kCumSum, {x, axis}, {{"exclusive", int64_t{1}}}).identical(f32({5}, {0, 1, 3, 6, 10})));
  EXPECT_TRUE(run1(OpKind::kCumSum, {x, axis}, {{"reverse", int64_t{1}}}).identical(f32({5}, {15, 14, 12, 9, 5})));
  EXPECT_TRUE(run1(OpKind::kCumSum, {x, axis}, {{"reverse", int64_t{1}}, {"exclusive", int64_t{1}}})
                  .identical(f32({5}, {14, 12, 9, 5, 0})));
}

TEST(CumSum, AxesAndDtypes) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(run1(OpKind::kCumSum, {x, scalar_i64(0)}).identical(f32({2, 3}, {1, 2, 3, 5, 7, 9})));
  EXPECT_TRUE(run1(OpKind::kCumSum, {x, Tensor::scalar_int(1, DType::kI32)}).identical(f32({2, 3}, {1, 3, 6, 4, 9, 15})));
  EXPECT_TRUE(run1(OpKind::kCumSum, {x, i64({1}, {-1})}).identical(f32({2, 3}, {1, 3, 6, 4, 9, 15})));
  EXPECT_TRUE(run1(OpKind::kCumSum, {i32({3}, {1, -2, 3}), scalar_i64(0)}).identical(i32({3}, {1, -1, 2})));
  EXPECT_TRUE(run1(OpKind::kCumSum, {i64({3}, {5, 6, 7}), scalar_i64(0)}).identical(i64({3}, {5, 11, 18})));
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_TRUE(run1(OpKind::kCumSum, {i64({2}, {kMax, 1}), scalar_i64(0)})
                  .identical(i64({2}, {kMax, std::numeric_limits<int64_t>::min()})));  // wraps
  EXPECT_TRUE(run1(OpKind::kCumSum, {f16({3}, {0.5f, 1, 2}), scalar_i64(0)}).identical(f16({3}, {0.5f, 1.5f, 3.5f})));
}

TEST(CumSum, Errors) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_USER_ERROR(run1(OpKind::kCumSum, {x, scalar_i64(2)}), "out of range");
  EXPECT_USER_ERROR(run1(OpKind::kCumSum, {x, i64({2}, {0, 1})}), "must be a scalar");
  EXPECT_USER_ERROR(run1(OpKind::kCumSum, {boolean({2}, {1, 0}), scalar_i64(0)}), "expected one of");
}

// ---- Range --------------------------------------------------------------------------------

TEST(Range, Dtypes) {
  EXPECT_TRUE(run1(OpKind::kRange, {scalar_i64(0), scalar_i64(5), scalar_i64(2)}).identical(i64({3}, {0, 2, 4})));
  EXPECT_TRUE(run1(OpKind::kRange, {Tensor::scalar_int(10, DType::kI32), Tensor::scalar_int(6, DType::kI32),
                                    Tensor::scalar_int(-3, DType::kI32)})
                  .identical(i32({2}, {10, 7})));
  EXPECT_TRUE(tensors_near(run1(OpKind::kRange, {Tensor::scalar_float(1), Tensor::scalar_float(2),
                                                 Tensor::scalar_float(0.25f)}),
                           f32({4}, {1, 1.25f, 1.5f, 1.75f})));
  EXPECT_TRUE(run1(OpKind::kRange, {Tensor::scalar_float(0, DType::kF16), Tensor::scalar_float(1.5f, DType::kF16),
                                    Tensor::scalar_float(0.5f, DType::kF16)})
                  .identical(f16({3}, {0, 0.5f, 1})));
  EXPECT_TRUE(run1(OpKind::kRange, {scalar_i64(5), scalar_i64(0), scalar_i64(1)}).identical(i64({0}, {})));
  EXPECT_TRUE(tensors_near(run1(OpKind::kRange, {Tensor::scalar_float(3), Tensor::scalar_float(1),
                                                 Tensor::scalar_float(-0.5f)}),
                           f32({4}, {3, 2.5f, 2, 1.5f})));
}

TEST(Range, ExtremeIntegers) {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_TRUE(run1(OpKind::kRange, {scalar_i64(kMax - 2), scalar_i64(kMax), scalar_i64(1)})
                  .identical(i64({2}, {kMax - 2, kMax - 1})));
  EXPECT_TRUE(run1(OpKind::kRange, {scalar_i64(kMin), scalar_i64(kMax), scalar_i64(kMax)})
                  .identical(i64({3}, {kMin, -1, kMax - 1})));
}

TEST(Range, Errors) {
  EXPECT_USER_ERROR(run1(OpKind::kRange, {scalar_i64(0), scalar_i64(5), scalar_i64(0)}), "delta is 0");
  EXPECT_USER_ERROR(run1(OpKind::kRange, {Tensor::scalar_float(0), Tensor::scalar_float(1), Tensor::scalar_float(0)}),
                    "delta is 0");
  EXPECT_USER_ERROR(run1(OpKind::kRange, {scalar_i64(0), scalar_i64(std::numeric_limits<int64_t>::max()), scalar_i64(1)}),
                    "at most");
  EXPECT_USER_ERROR(run1(OpKind::kRange, {Tensor::scalar_float(0), Tensor::scalar_float(1e30f), Tensor::scalar_float(1e-30f)}),
                    "at most");
  EXPECT_USER_ERROR(run1(OpKind::kRange, {Tensor::scalar_float(0), Tensor::scalar_float(NAN), Tensor::scalar_float(1)}),
                    "not a number");
  EXPECT_USER_ERROR(run1(OpKind::kRange, {scalar_i64(0), Tensor::scalar_int(5, DType::kI32), scalar_i64(1)}),
                    "differ in type");
  EXPECT_USER_ERROR(run1(OpKind::kRange, {i64({2}, {0, 1}), scalar_i64(5), scalar_i64(1)}), "must be a scalar");
}

}  // namespace
}  // namespace mono::testing
