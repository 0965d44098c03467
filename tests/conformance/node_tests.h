// The ONNX node conformance tests of Debian's libonnx-testdata: which cases Mono's ops and
// dtypes cover, and one case loaded as a graph with its test data sets. Shared by the CPU
// conformance test and the GPU conformance runner.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/driver/test_data.h"
#include "compiler/ir/graph.h"

namespace mono::conformance {

// The node tests' folder: $MONO_ONNX_NODE_TESTS, else Debian's
// /usr/share/libonnx-testdata/data/node (the GPU machine gets a copy of the selected cases).
std::string node_tests_dir();

// Every case folder, sorted (empty when the package is missing).
std::vector<std::string> list_cases();
// The sub-folders of `dir`, sorted.
std::vector<std::string> list_dirs(const std::string& dir);

// Cases whose ops Mono supports but which are left out, with the reason (training-mode ops:
// Mono compiles inference graphs and rejects them clearly).
const std::map<std::string, std::string>& excluded();

// Why case `name` is outside Mono's ops and dtypes, or "" if it is selected.
std::string selection_reason(const std::string& name);

// One case: its graph for one test data set (integer inputs that decide shapes are bound to
// their test values, as Mono compiles static shapes), and the test case.
struct LoadedCase {
  std::unique_ptr<Graph> graph;
  TestCase data;
  std::vector<Tensor> inputs;  // the test inputs in the graph's input order
};
LoadedCase load_case(const std::string& name, const std::string& set);

// numpy.testing.assert_allclose(rtol=1e-3, atol=1e-7), as ONNX's backend tests compare: ""
// when every output matches, else the first mismatch.
std::string allclose(const std::vector<Tensor>& got, const std::vector<Tensor>& want);

}  // namespace mono::conformance
