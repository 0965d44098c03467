// Helpers for op unit tests: run one node through its shape rule and CPU reference.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace mono::testing {

// Builds a one-node graph whose inputs are constants (so inputs that shapes depend on are
// known), checks its signature, infers its outputs and evaluates it. std::nullopt marks an
// omitted optional input. Throws UserError like the compiler would.
std::vector<Tensor> run_op(OpKind op, const std::vector<std::optional<Tensor>>& inputs,
                           const std::map<std::string, AttrValue>& attrs = {},
                           int num_outputs = 1, int opset = 20);

// Same, returning only the inferred output types (no evaluation).
std::vector<TensorType> infer_op(OpKind op, const std::vector<std::optional<Tensor>>& inputs,
                                 const std::map<std::string, AttrValue>& attrs = {},
                                 int num_outputs = 1, int opset = 20);

// Type equal and every element within `tol` (absolute + relative), NaN equal to NaN.
::testing::AssertionResult tensors_near(const Tensor& got, const Tensor& want, double tol = 1e-6);

inline Tensor f32(const Shape& s, const std::vector<float>& v) { return Tensor::from_floats(s, v); }
inline Tensor i64(const Shape& s, const std::vector<int64_t>& v) { return Tensor::from_ints(s, v); }

// Deterministic pseudo-random values in [lo, hi), and an f32 (or `dt`) tensor of them.
std::vector<float> rand_floats(int64_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f);
Tensor rand_tensor(const Shape& shape, uint32_t seed, DType dt = DType::kF32);
inline Tensor half(const Tensor& t) { return t.cast(DType::kF16); }

// Row-major strides of shape `s`, and the multi-index of flat element `i` of it.
std::vector<int64_t> strides_of(const Shape& s);
std::vector<int64_t> unravel(int64_t i, const Shape& s);

// Attribute values: int, float, string, ints.
inline AttrValue I(int64_t v) { return v; }
inline AttrValue F(float v) { return v; }
inline AttrValue S(const char* v) { return std::string(v); }
inline AttrValue Is(std::vector<int64_t> v) { return v; }

}  // namespace mono::testing

// Expects `stmt` to throw mono::UserError whose message contains `substr`.
#define EXPECT_USER_ERROR(stmt, substr)                                              \
  do {                                                                               \
    try {                                                                            \
      stmt;                                                                          \
      ADD_FAILURE() << "expected a UserError containing: " << (substr);              \
    } catch (const ::mono::UserError& e) {                                           \
      EXPECT_NE(std::string(e.what()).find(substr), std::string::npos) << e.what();  \
    }                                                                                \
  } while (0)
