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
#include <set>
#include <string>

#include "compiler/ir/graph.h"

namespace mono {

struct PrintOptions {
  // Constants with more elements are printed as `<N elements>`: parseable only with
  // ParseOptions::fill_elided, which makes values up.
  int64_t max_constant_elements = 16;
  // Elide float constants only: integer and bool constants are printed in full whatever their
  // size, since shapes, axes and indices change what a graph computes and the code generated
  // for it (weights do not). What tuning fragments are printed with.
  bool elide_floats_only = false;
  // Constants printed in full whatever their size: those whose values change the code generated
  // (a causal mask applied by index, KernelPlan's flash heads).
  std::set<const Value*> in_full;
  bool node_names = true;  // print `@name`
};

void print_graph(std::ostream& os, const Graph& graph, const PrintOptions& options = {});
std::string graph_to_string(const Graph& graph, const PrintOptions& options = {});

// Pieces shared with the parser and the code generator.
std::string quote_name(const std::string& name);  // bare if [A-Za-z0-9_.]+, else "quoted"
std::string quote_string(const std::string& s);   // always "quoted", with \" \\ \xHH escapes
std::string format_float(double v);               // shortest round-trip, always float-looking
std::string format_attr(const AttrValue& v);

struct ParseOptions {
  // Accept elided float constants (`const %w: f32[64,64] = <4096 elements>`) and fill them
  // with made-up values: deterministic pseudo-random numbers drawn from `seed` and the
  // constant's name, uniform in [-s, s] with s = 1/sqrt(max(d0, numel/d0)) for a tensor of
  // rank >= 2 (d0 its first dimension) and s = 1 otherwise, so that chains of GEMMs and
  // convolutions on made-up weights stay about unit size (finite in fp16). The element
  // count must equal the declared shape's. Without this option an elided constant is an
  // error; an elided integer or bool constant always is (its values are structure).
  bool fill_elided = false;
  uint64_t seed = 0;
};

// Parses the textual form (syntax only). Node output types may be omitted (`%y = Relu(%x)`):
// run infer_shapes() (compiler/ops/infer.h) afterwards; declared types are kept and
// verify_graph() checks them. Throws UserError naming the line on bad text.
std::unique_ptr<Graph> parse_graph(const std::string& text, const ParseOptions& options = {});

// The values ParseOptions::fill_elided gives an elided float constant named `name`.
Tensor made_up_constant(const TensorType& type, const std::string& name, uint64_t seed);

}  // namespace mono
