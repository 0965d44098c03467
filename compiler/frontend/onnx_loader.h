// The ONNX front end: reads a model file (with weights inline or in external data files next
// to it) into the IR with every shape static and inferred.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace mono {

struct LoadOptions {
  // Shapes bound by the user (`--shape input_ids=1x128`), by graph input name.
  std::map<std::string, Shape> input_shapes;
  // Graph inputs fixed to a value at compile time (a specialisation: the input disappears).
  std::map<std::string, Tensor> constant_inputs;
  // A dynamic first dimension without a binding becomes 1 (the batch); others are errors.
  bool default_batch_to_one = true;
};

struct LoadResult {
  std::unique_ptr<Graph> graph;
  std::vector<std::string> notes;  // e.g. "input 'x': dynamic batch dimension set to 1"
};

// Loads, checks and shape-infers a model. Throws UserError with one line naming the file and
// the node, value or field at fault.
LoadResult load_onnx(const std::string& path, const LoadOptions& options = {});

// "1x3x224x224" -> {1,3,224,224}; "" or "scalar" -> {}. Throws UserError on bad text.
Shape parse_dims(const std::string& text);
// "name=1x128" -> binding. Throws UserError on bad text.
std::pair<std::string, Shape> parse_shape_binding(const std::string& text);

// A serialized TensorProto file (the ONNX test-data layout: input_0.pb, output_0.pb).
Tensor read_tensor_file(const std::string& path, std::string* name = nullptr);
void write_tensor_file(const std::string& path, const Tensor& tensor, const std::string& name);

}  // namespace mono
