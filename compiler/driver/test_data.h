// Test data in the ONNX layout (DIR/input_N.pb, DIR/output_N.pb), and matching its inputs to
// a graph's. Outputs are compared with compiler/reference/compare.h.
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

}  // namespace mono
