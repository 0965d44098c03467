// The textual form of the IR, meant to be read and to round-trip through parse_graph():
//
//   graph tiny (opset 20) {
//     input %x: f32[1,4]
//     const %w: f32[2] = [0.5, 1]
//     %y: f32[1,4] = Relu(%x) @relu_0
//     %z: f32[1,4], _ = Dropout(%y, _) {seed=0}
//     output %z
//   }
//
// `_` marks an omitted optional input or unwanted output; `@name` is the ONNX node name.
// Names that are not plain identifiers are quoted ("onnx::MatMul_12").
#pragma once

#include <iosfwd>
#include <string>

#include "compiler/ir/graph.h"

namespace mono {

struct PrintOptions {
  // Constants with more elements are printed as `<N elements>` (not parseable).
  int64_t max_constant_elements = 16;
  bool node_names = true;  // print `@name`
};

void print_graph(std::ostream& os, const Graph& graph, const PrintOptions& options = {});
std::string graph_to_string(const Graph& graph, const PrintOptions& options = {});

// Pieces shared with the parser and the code generator.
std::string quote_name(const std::string& name);  // bare if [A-Za-z0-9_.]+, else "quoted"
std::string quote_string(const std::string& s);   // always "quoted", with \" \\ \xHH escapes
std::string format_float(double v);               // shortest round-trip, always float-looking
std::string format_attr(const AttrValue& v);

// Parses the textual form (syntax only). Node output types may be omitted (`%y = Relu(%x)`):
// run infer_shapes() (compiler/ops/infer.h) afterwards; declared types are kept and
// verify_graph() checks them. Throws UserError naming the line on bad text.
std::unique_ptr<Graph> parse_graph(const std::string& text);

}  // namespace mono
