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
