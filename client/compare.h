// Test data in the ONNX layout (DIR/input_N.pb, DIR/output_N.pb) and the comparison of
// computed outputs with expected ones.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace mono {

struct TestCase {
  std::vector<Tensor> inputs;
  std::vector<std::string> input_names;  // as stored in the files (may be empty)
  std::vector<Tensor> outputs;
};

// Reads input_0.pb, input_1.pb, ... and output_0.pb, ... until one is missing.
TestCase read_test_case(const std::string& dir);

// Orders test inputs as the graph's inputs: by name where every file names an input, else by
// position. Throws UserError naming what does not match.
std::vector<Tensor> match_inputs(const Graph& graph, const TestCase& tc);

struct Comparison {
  bool same_type = false;
  bool exact = false;      // integer or bool: must match exactly
  double max_abs = 0;      // max |got - want|
  double max_ref = 0;      // max |want|
  double rel = 0;          // max_abs / max_ref (max_abs when max_ref is 0)
  int64_t nan_mismatch = 0;  // elements where exactly one side is NaN
  int64_t worst_index = -1;
  // Within tolerance: same type, no NaN mismatch, rel <= tol (exact for integer/bool types).
  bool ok(double tol) const;
};

Comparison compare_tensors(const Tensor& got, const Tensor& want);

}  // namespace mono
